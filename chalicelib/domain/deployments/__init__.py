"""Deployments: environments, deployment jobs and agents, inline deploy: entries, what a deployment delivers."""
