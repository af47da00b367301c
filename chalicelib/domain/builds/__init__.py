"""Builds: starting, re-running, cancelling them; finding builds and jobs; what a job left; its variables."""
