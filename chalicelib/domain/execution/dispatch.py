"""Dispatching a queued build job: claim it, mint its job token, and hand its ticket to its executor.

The job token is the only credential the job's runner gets; it is stored hashed on the job and dies with it.
Jobs for build agents are not dispatched: an agent of their image takes them (domain/execution/build_agents.py).
"""

from __future__ import annotations

import logging
import signal
import time

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job, MoveFields
from chalicelib.core.status import Event, Status
from chalicelib.domain.configuration import unhonoured
from chalicelib.domain.execution import job_slots, lost_jobs, progress, routing
from chalicelib.domain.job_identity.job_tokens import keys_of, mint_token
from chalicelib.domain.projects.request_variables import withholds_secrets
from chalicelib.executors import kinds
from chalicelib.protocol.ticket import Ticket
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store

log = logging.getLogger(__name__)


def dispatch_job(job_id: str, build_key: tuple[int, int] | None = None) -> None:
    """Run the job if this delivery wins its claim; a duplicate, or a cancelled job, returns at once.
    ``build_key``: the project and build ids the message names, to read the build with the job."""
    config = settings()
    job, build = _read(job_id, build_key)
    if job is None or job.deployment_id is not None or job.status != Status.QUEUED:
        return
    if job.executor is None:
        routed = _route(job)
        if routed is None:
            return
        job = routed
    kind = kinds.of(job.executor)
    if kind.pulled:  # an agent takes it
        return
    api_url = config.runner_api_url
    refusal = kind.refusal(job.run_on)
    if refusal is None and api_url is None:
        refusal = "Builds cannot run: the service does not know its URL for runners (CONVEYOR_RUNNER_API_URL)."
    if refusal is not None or api_url is None:
        routing.refuse(job, refusal or "")
        return
    if not job_slots.admit(job):  # max_jobs: it waits, queued, until a job of its project ends
        return
    if build is None:  # consistently: the job's message follows the build's write closely
        build = build_store.get_build(job.project_id, job.build_id, consistent=True)
    if build is None:  # deleted meanwhile
        progress.move(job, Event.FAIL, MoveFields(message="The build was deleted."))
        return
    token = mint_token(keys_of(job))
    lease = int(time.time()) + config.lease_seconds
    # the claim and the build's state that follows from it: one write
    claimed = progress.move_in_build(
        build, job, Event.CLAIM, MoveFields(lease_expires=lease, token_hash=token.token_hash)
    )
    if claimed is None:
        return
    started = kind.start(claimed, Ticket(api_url, job_id, token.token))
    if started.refused is not None:  # its executor would not start it
        progress.move(claimed, Event.FAIL, MoveFields(message=started.refused))
        progress.refresh(claimed)
        return
    if started.external_id is not None:
        job_store.note_external_id(job_id, started.external_id)
    if started.runner_ended:  # a runner here that did not exit 0 (it finished the job, or found it ended)
        fail_if_abandoned(job_id, token.token_hash, started.exit_code)


def _read(job_id: str, build_key: tuple[int, int] | None) -> tuple[Job | None, Build | None]:
    """The job, and its build when the message names it (one consistent read of both; else the job alone)."""
    if build_key is None:
        return job_store.get_job(job_id), None
    job, build, _ = job_store.get_job_build_and_project(job_id, 0, *build_key, None)
    if job is None or build is None or (job.project_id, job.build_id) != build_key:
        return job, None
    return job, build


def _route(job: Job) -> Job | None:
    """Place a job queued without an executor (before routing existed, or run again after a refusal); the job
    when it is to be dispatched now, None when it was refused or waits for a build agent."""
    build = build_store.get_build(job.project_id, job.build_id)
    if build is None:  # deleted meanwhile, with its jobs
        return None
    pull_request = withholds_secrets(build)  # a pull request's, or shaped by variables of one who may not update it
    placed, refused = routing.place([job], pull_request)
    # what the build's start refused (services, a stack, too many cache: entries) is refused again when run again
    refused |= unhonoured.refusals(build.configuration, placed, refused, routing.outside_image, routing.provides_setup)
    if job.job_id in refused:
        routing.refuse(job, refused[job.job_id])
        return None
    job = placed[0]
    kind = kinds.of(job.executor)
    if not job_store.assign_route(job, kind.name, job.run_on, job.message, pull_request):
        return None
    return None if kind.pulled else job


def fail_if_abandoned(job_id: str, token_hash: str, exit_code: int | None = None) -> None:
    """A local runner that exited without finishing its job (killed, crashed): the job fails now, not at lease end,
    saying how the runner ended (``exit_code``: negative for a signal). Only while the job is still this attempt's
    (its token's): a re-run may have claimed it again meanwhile."""
    job = job_store.get_job(job_id)
    if job is None or job.token_hash != token_hash:
        return
    if job.status in (Status.RUNNING, Status.CANCELLING) and job.lease_expires is not None:
        log.warning("job %s: its runner ended without finishing it (exit code %s)", job_id, exit_code)
        lost_jobs.end_lost(job, runner_ended(exit_code), holder=token_hash)


def runner_ended(exit_code: int | None) -> str:
    """Why a job whose runner ended before finishing it failed, from the runner's exit code."""
    if exit_code is not None and exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        return f"The job's runner was killed ({name}) before it finished the job; the job failed."
    if exit_code is not None:
        return f"The job's runner exited with code {exit_code} before it finished the job; the job failed."
    return "The job's runner ended without finishing the job."
