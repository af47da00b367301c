"""Running one deployment job: claim it, gather the build's artifacts and the variables, let the provider deliver.

A deployment runs the service's own provider code (no script of a build), so the service runs it itself, in
the deployments worker; a deployment script runs on the user's machine through ``conveyor agent``. The job
holds a lease and heeds a stop as a build job does.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chalicelib import deploy
from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment
from chalicelib.core.environments import Environment
from chalicelib.core.jobs import Job, JobCounts, MoveFields
from chalicelib.core.projects import Project
from chalicelib.core.status import Event, Status
from chalicelib.deploy.base import Delivery, DeployFailed, DeployStopped
from chalicelib.deploy.destinations import DESTINATION_SETTINGS
from chalicelib.domain.builds.job_environment import appveyor_variables
from chalicelib.domain.deployments.delivery_inputs import DeploymentInputs, job_artifacts, substitute
from chalicelib.domain.deployments.environments import environment_values
from chalicelib.domain.deployments.inline_delivery import inline_inputs
from chalicelib.domain.execution import progress
from chalicelib.domain.job_identity import id_tokens
from chalicelib.errors import ConveyorError
from chalicelib.executors import runner_job_timeout
from chalicelib.protocol.attempt import Attempt
from chalicelib.protocol.logstream import LogStream, SecretMask
from chalicelib.shapes.builds import build_json, job_json
from chalicelib.store import blobs, job_moves, logs
from chalicelib.store import builds as build_store
from chalicelib.store import deployments as store
from chalicelib.store import environments as environment_store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store

log = logging.getLogger(__name__)
CANCELLED = "cancelled"
LEASE_LOST = "lease lost"


@dataclass(kw_only=True)
class Run(Attempt):
    """One attempt at a deployment job."""

    project: Project
    build: Build
    job: Job
    environment_name: str | None = None  # the environment it delivers to (None: an inline deployment, its build's)


def run_deployment_job(job_id: str) -> None:
    """Deliver the job's deployment if this delivery wins the claim; a duplicate returns at once."""
    config = settings()
    job = job_store.get_job(job_id)
    if job is None or job.deployment_id is None:
        return
    if not job_moves.claim_job(job_id, int(time.time()) + config.lease_seconds):
        return
    deployment = store.get_deployment(job.project_id, job.deployment_id)
    build = build_store.get_build(job.project_id, job.build_id)
    project = project_store.get_project_by_id(job.account_id, job.project_id)
    environment = None
    if deployment is not None and deployment.inline is None:
        environment = environment_store.get_environment(job.account_id, deployment.environment_id)
    if deployment is None or build is None or project is None or (environment is None and deployment.inline is None):
        progress.finish_job(
            job, False, MoveFields(message="The deployment's build, project or environment no longer exists.")
        )
        return
    progress.refresh_deployment(job.project_id, job.deployment_id)
    with tempfile.TemporaryDirectory(prefix="conveyor-deploy-") as work:
        if environment is None:  # an inline deployment: its build's deploy: entry
            inputs = inline_inputs(project, build, deployment, Path(work))
        else:
            inputs = deployment_inputs(project, build, deployment, environment, Path(work))
        job_prefix = blobs.prefix_of(job)
        stream = LogStream(logs.chunk_sink(job_prefix), SecretMask(inputs.secrets), chunk_bytes=logs.MIN_PART_BYTES)
        deadline = time.monotonic() + runner_job_timeout()  # the deployments function's, as the runner's
        run = Run(project=project, build=build, job=job, log=stream, variables=inputs.variables, deadline=deadline)
        run.environment_name = environment.name if environment is not None else None
        provider = deployment.environment.provider if environment is None else environment.provider
        _deliver(run, provider, inputs, job_prefix)


def deployment_inputs(
    project: Project, build: Build, deployment: Deployment, environment: Environment, folder: Path
) -> DeploymentInputs:
    """The artifacts, variables and settings of a deployment job; ``folder`` is its APPVEYOR_BUILD_FOLDER.

    Where it delivers (a destination setting's $(NAME)) takes no variable of the deployment's start request: who
    may start a deployment does not choose where the environment's secrets go. A secret that does not decrypt for
    the environment as it delivers now (set for another provider or agent key) is refused, saying which."""
    left_out: list[str] = []
    provider_settings, environment_variables, secrets = environment_values(environment, left_out)
    chosen = [job for job in job_store.get_jobs(build.job_ids) if deployment.build_job_id in (None, job.job_id)]
    unrequested = {**appveyor_variables(project, build, chosen[0], folder), **environment_variables}
    variables = {**unrequested, **deployment.variables}
    if left_out:
        refusal = (
            f"The environment's secure {', '.join(left_out)} were not set for where it delivers now (its provider, "
            "or its agents' access key): set them again in the environment's settings."
        )
        return DeploymentInputs(chosen, [], {}, {}, secrets, refusal=refusal)
    return DeploymentInputs(
        build_jobs=chosen,
        artifacts=job_artifacts(chosen),
        variables=variables,
        settings={
            name: substitute(value, unrequested if name.lower() in DESTINATION_SETTINGS else variables)
            for name, value in provider_settings.items()
        },
        secrets=secrets,
    )


def _deliver(run: Run, provider: str, inputs: DeploymentInputs, job_prefix: str) -> None:
    beat = threading.Thread(target=heartbeat, args=(run,), name=f"heartbeat-{run.job.job_id}", daemon=True)
    beat.start()
    succeeded, message = False, None
    try:
        run.say(f"Deploying build {run.build.version} of {run.project.name} with the {provider} provider")
        for note in inputs.notes:
            run.say(note)
        if inputs.refusal is not None:
            raise DeployFailed(inputs.refusal)
        delivery = Delivery(
            settings=inputs.settings,
            artifacts=inputs.artifacts,
            variables=run.variables,
            context=_context(run.project, run.build, inputs.build_jobs[0]),
            log=run.say,
            should_stop=lambda: run.should_stop() is not None,
            id_token=lambda audience: _id_token(run, audience),
        )
        deploy.deliver(provider, delivery)
        succeeded = True
        run.say("Deployment succeeded")
    except DeployStopped:
        run.say("The deployment was stopped.")
    except DeployFailed as failure:
        message = str(failure)
        run.say(message)
    except Exception:
        log.exception("deployment job %s: the runner failed", run.job.job_id)
        message = "The deployment failed unexpectedly."
        run.say(message)
    finally:
        reason = run.end()
        beat.join(timeout=settings().heartbeat_seconds + 5)
    try:
        logs.seal_log(job_prefix, run.log.close())
    except Exception:
        log.exception("deployment job %s: the finished log could not be stored", run.job.job_id)
    counts = JobCounts(messages=0 if succeeded or reason == CANCELLED else 1)
    _end_job(run.job, reason, succeeded, message, counts)


def _id_token(run: Run, audience: str) -> str:
    """The deployment's ID token, for a provider that assumes a role with it (its environment names its ``sub``)."""
    subject = id_tokens.Subject(run.project, run.build, run.job, run.environment_name)
    try:
        return id_tokens.deployment_id_token(subject, audience)
    except ConveyorError as error:
        raise DeployFailed(error.message) from None


def _end_job(job: Job, reason: str | None, succeeded: bool, message: str | None, counts: JobCounts) -> None:
    """Record how a run ended: as it saw it, unless a cancel or a lost lease decided already."""
    if reason == LEASE_LOST:
        return  # the sweeper ended the job already
    if reason == CANCELLED:
        fresh = job_store.get_job(job.job_id) or job
        progress.move(fresh, Event.STOPPED, MoveFields(message="Cancelled by a user.", counts=counts))
        progress.refresh(job)
        return
    progress.finish_job(job_store.get_job(job.job_id) or job, succeeded, MoveFields(message=message, counts=counts))


def heartbeat(run: Run) -> None:
    """Renew the lease every few seconds; a cancel or a lost lease stops the deployment."""
    config = settings()
    while run.stop_reason is None:
        run.ended.wait(config.heartbeat_seconds)
        if run.stop_reason is not None:
            return
        try:
            status = job_store.renew_lease(run.job.job_id, int(time.time()) + config.lease_seconds)
        except Exception:  # a blip of DynamoDB: try again at the next beat; the lease has room for it
            log.warning("job %s: renewing the lease failed", run.job.job_id, exc_info=True)
            continue
        if status is None:
            run.stop_reason = LEASE_LOST
        elif status == Status.CANCELLING:
            run.stop_reason = CANCELLED
        try:
            run.log.flush()
        except Exception:
            log.warning("job %s: flushing the log failed", run.job.job_id, exc_info=True)


def _context(project: Project, build: Build, job: Job) -> dict[str, Any]:
    return {
        "accountName": project.account_name,
        "projectName": project.name,
        "projectSlug": project.slug,
        "build": build_json(build),
        "job": job_json(job),
        "commit": {key: build.commit.get(key) for key in ("commitId", "message", "authorName", "committed")},
    }


def agent_deadline(job_id: str) -> None:
    """An agent's time to take the job is up: a job still queued fails, saying so."""
    job = job_store.get_job(job_id)
    if job is None or job.status != "queued":
        return
    progress.move(
        job, Event.FAIL, MoveFields(message="No deployment agent of the environment took the deployment in time.")
    )
    progress.refresh(job)
