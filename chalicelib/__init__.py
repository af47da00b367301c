"""Conveyor: a serverless CI/CD service with an AppVeyor-compatible REST API."""
