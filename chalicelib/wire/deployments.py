"""Deployment shapes: the Deployment, its jobs; and the start-deployment body."""

from __future__ import annotations

from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment
from chalicelib.core.jobs import Job
from chalicelib.domain.deployments.deployment_agents import AgentJob
from chalicelib.domain.deployments.deployments import StartRequest
from chalicelib.domain.shared.validation import MAX_NAME_LENGTH, invalid
from chalicelib.shapes.builds import build_json
from chalicelib.shapes.time import optional_timestamps, timestamp
from chalicelib.wire.environments import environment_summary
from chalicelib.wire.fields import Fields, bounded_variables


def deployment_json(deployment: Deployment, build: Build | None, jobs: list[Job]) -> dict[str, Any]:
    """A deployment as every response shows it (its build without jobs, the environment's summary)."""
    return {
        "deploymentId": deployment.deployment_id,
        "build": build_json(build) if build is not None else None,
        "environment": environment_summary(deployment.environment),
        "jobs": [deployment_job_json(job) for job in jobs],
        "status": deployment.status,
        "created": timestamp(deployment.created),
        **optional_timestamps(started=deployment.started, finished=deployment.finished, updated=deployment.updated),
    }


def deployment_job_json(job: Job) -> dict[str, Any]:
    return {
        "jobId": job.job_id,
        "name": job.name,
        "messagesCount": job.counts.messages,
        "status": job.status,
        "created": timestamp(job.created),
        **optional_timestamps(started=job.started, finished=job.finished, updated=job.updated),
    }


def agent_job_json(job: AgentJob) -> dict[str, Any]:
    """What ``POST /api/agent/jobs/next`` hands an agent: the job, its artifacts' URLs, variables and settings."""
    return {
        "deploymentId": job.deployment_id,
        "jobId": job.job_id,
        "artifacts": job.artifacts,
        "variables": job.variables,
        "settings": job.settings,
    }


def parse_start_request(body: Any) -> StartRequest:
    """POST /api/deployments."""
    fields = Fields(body)
    variables = fields.body.get("environmentVariables") or {}
    if not isinstance(variables, dict) or not all(
        isinstance(name, str) and name and isinstance(value, str | int | float) and not isinstance(value, bool)
        for name, value in variables.items()
    ):
        raise invalid("environmentVariables", "environmentVariables must be an object of names to string values.")
    return StartRequest(
        environment_name=fields.text("environmentName", MAX_NAME_LENGTH),
        account_name=fields.text("accountName"),
        project_slug=fields.text("projectSlug"),
        build_version=fields.text("buildVersion"),
        build_job_id=fields.optional_text("buildJobId") or None,
        environment_variables=bounded_variables(
            "environmentVariables", {name: str(value) for name, value in variables.items()}
        ),
    )
