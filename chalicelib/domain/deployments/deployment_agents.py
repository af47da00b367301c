"""Deployment agents: machines that take the Agent deployments of one environment, known by its access key.

An agent asks for its next job, gets the artifacts' URLs, the variables and the settings, runs the
deployment where it is, and reports log lines, heartbeats and the result. A job is claimed with the
same conditional write as a runner's, and holds the same lease.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chalicelib.config import settings
from chalicelib.core.environments import Environment
from chalicelib.core.jobs import Job, JobCounts, MoveFields
from chalicelib.core.status import Event, Status
from chalicelib.deploy.providers import by_agents
from chalicelib.domain.deployments.environments import environment_values, find_environment_by_access_key
from chalicelib.domain.execution import progress
from chalicelib.errors import Conflict, Invalid, NotFound, Unauthorized
from chalicelib.store import blobs, job_moves, logs
from chalicelib.store import builds as build_store
from chalicelib.store import deployments as deployment_store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store

MAX_LINES = 1000  # lines per log report
MAX_MESSAGE_LENGTH = 4096  # the result's message, kept with the job


@dataclass(frozen=True)
class AgentJob:
    """What an agent needs to run one deployment job."""

    deployment_id: int
    job_id: str
    artifacts: list[dict[str, Any]]
    variables: dict[str, str]
    settings: dict[str, str]


def agent_environment(authorization: str | None) -> Environment:
    """The Agent environment whose access key the request carries (``Authorization: Bearer <key>``)."""
    scheme, _, key = (authorization or "").partition(" ")
    environment = find_environment_by_access_key(key.strip()) if scheme.lower() == "bearer" and key else None
    if environment is None or not by_agents(environment.provider):
        raise Unauthorized()
    return environment


def next_job(environment: Environment, agent_name: str) -> AgentJob | None:
    """Claim the oldest queued job of the environment's open deployments for this agent, if there is one."""
    for deployment in reversed(deployment_store.list_environment_deployments(environment.environment_id, 20)):
        if Status(deployment.status).finished:
            continue
        for job in job_store.get_jobs(deployment.job_ids):
            if job.status == Status.QUEUED and job_moves.claim_job(job.job_id, _lease()):
                job_store.name_agent(job.job_id, agent_name)
                progress.refresh_deployment(job.project_id, deployment.deployment_id)
                assignment = _assignment(environment, job)
                if assignment is not None:
                    return assignment
    return None


def heartbeat(environment: Environment, job_id: str) -> str:
    """Renew the job's lease; the job's status says whether to go on (``running``) or stop (``cancelling``)."""
    job = _own_job(environment, job_id)
    status = job_store.renew_lease(job.job_id, _lease())
    if status is None:
        raise Conflict("The job is no longer running.")
    return status


def append_log(environment: Environment, job_id: str, lines: list[str]) -> None:
    """Store a batch of the job's log lines, secrets masked, as the job's next log chunk."""
    if len(lines) > MAX_LINES:
        raise Invalid(f"Send at most {MAX_LINES} log lines at a time.")
    job = _own_job(environment, job_id)
    if Status(job.status).finished:
        raise Conflict("The job has finished; its log is closed.")
    from chalicelib.protocol.logstream import (  # the log's masking, loaded only where used: cold start
        SecretMask,
        split_line,
    )

    mask = SecretMask(environment_values(environment, left_out=[])[2])
    body = b"".join(piece + b"\n" for line in lines for piece in split_line(mask(line)))
    logs.put_chunk(blobs.prefix_of(job), job_store.next_log_chunk(job.job_id), body)


def finish(environment: Environment, job_id: str, succeeded: bool, message: str | None) -> None:
    """The agent's result: the log is sealed and the job ends (cancelled if a stop came first)."""
    job = _own_job(environment, job_id)
    if Status(job.status).finished:
        return
    if Status(job.status) is Status.QUEUED:
        raise Conflict("The job was never taken: an agent takes it with POST /api/agent/jobs/next first.")
    fresh = job_store.get_job(job.job_id) or job
    try:
        logs.seal_log(blobs.prefix_of(job), job_store.log_chunk_count(job.job_id))
    except logs.LogIncomplete as error:  # a log report still in flight, or lost: the result must wait for it
        raise Conflict(
            "The job's log is not all stored yet (a log report is in flight); send the result again."
        ) from error
    if Status(fresh.status) is Status.CANCELLING:
        progress.move(fresh, Event.STOPPED, MoveFields(message="Stopped by a user."))
        progress.refresh(fresh)
    else:
        progress.finish_job(
            fresh, succeeded, MoveFields(message=message, counts=JobCounts(messages=0 if succeeded else 1))
        )


def _assignment(environment: Environment, job: Job) -> AgentJob | None:
    """What the agent is handed for the job it claimed; None when it may not have it (the job fails, saying why)."""
    deployment = deployment_store.get_deployment(job.project_id, job.deployment_id or 0)
    build = build_store.get_build(job.project_id, job.build_id)
    project = project_store.get_project_by_id(job.account_id, job.project_id)
    if deployment is None or build is None or project is None:
        raise NotFound("The deployment no longer exists.")
    from chalicelib.domain.deployments.deployment_jobs import (
        deployment_inputs,  # providers load only where used: cold start
    )

    # APPVEYOR_BUILD_FOLDER is the agent's own: it sets it to the folder it puts the artifacts in
    inputs = deployment_inputs(project, build, deployment, environment, Path("."))
    if inputs.refusal is not None:  # secrets set for another provider or key are never handed to this agent
        progress.finish_job(job_store.get_job(job.job_id) or job, False, MoveFields(message=inputs.refusal))
        return None
    return AgentJob(
        deployment_id=deployment.deployment_id,
        job_id=job.job_id,
        artifacts=[artifact.description() for artifact in inputs.artifacts],
        variables=inputs.variables,
        settings=inputs.settings,
    )


def _own_job(environment: Environment, job_id: str) -> Job:
    job = job_store.get_job(job_id)
    if job is None or job.deployment_id is None or job.account_id != environment.account_id:
        raise NotFound("Job not found.")
    deployment = deployment_store.get_deployment(job.project_id, job.deployment_id)
    if deployment is None or deployment.environment_id != environment.environment_id:
        raise NotFound("Job not found.")
    return job


def _lease() -> int:
    return int(time.time()) + settings().lease_seconds
