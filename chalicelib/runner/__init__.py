"""Executing a job: source checkout, script phases, log streaming, artifacts and the build cache."""
