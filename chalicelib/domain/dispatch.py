"""Dispatching a queued build job: claim it, mint its job token, and hand its ticket to an executor.

The job token is the only credential the job's runner gets; it is stored hashed on the job and dies with it.
"""

from __future__ import annotations

import logging
import time

from chalicelib import executors
from chalicelib.config import settings
from chalicelib.core.jobs import Job, JobCounts
from chalicelib.core.status import Event, Status
from chalicelib.domain import progress
from chalicelib.domain.job_tokens import mint_token
from chalicelib.runner.protocol import Ticket
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store
from chalicelib.store import reports

log = logging.getLogger(__name__)


def dispatch_job(job_id: str) -> None:
    """Run the job if this delivery wins its claim; a duplicate, or a cancelled job, returns at once."""
    config = settings()
    job = job_store.get_job(job_id)
    if job is None or job.deployment_id is not None or job.status != Status.QUEUED:
        return
    api_url = config.runner_api_url
    refusal = executors.refusal()
    if refusal is None and api_url is None:
        refusal = "Builds cannot run: the service does not know its URL for runners (CONVEYOR_RUNNER_API_URL)."
    if refusal is not None or api_url is None:
        _refuse(job, refusal or "")
        return
    token = mint_token()
    if not job_store.claim_job(job_id, int(time.time()) + config.lease_seconds, token.token_hash):
        return
    build = build_store.get_build(job.project_id, job.build_id)
    project = project_store.get_project_by_id(job.account_id, job.project_id)
    fresh = job_store.get_job(job_id) or job
    if build is None or project is None:  # deleted meanwhile
        progress.move(fresh, Event.FAIL, "The build was deleted.")
        return
    progress.refresh_build(build.project_id, build.build_id)
    executors.run(Ticket(api_url, job_id, token.token))
    if config.executor == "local":
        _fail_if_abandoned(job_id)


def _refuse(job: Job, reason: str) -> None:
    """The job cannot run here: it fails at once, and its messages say why."""
    reports.add_reports(job.job_id, [(reports.MESSAGE, {"message": reason, "category": "error"})])
    progress.move(job, Event.FAIL, reason, counts=JobCounts(messages=1))
    progress.refresh(job)


def _fail_if_abandoned(job_id: str) -> None:
    """A local runner that exited without finishing its job (killed, crashed): the job fails now, not at lease end."""
    job = job_store.get_job(job_id)
    if job is not None and job.status in (Status.RUNNING, Status.CANCELLING) and job.lease_expires is not None:
        log.warning("job %s: its runner ended without finishing it", job_id)
        event = Event.STOPPED if job.status == Status.CANCELLING else Event.FAIL
        progress.move(job, event, "The job's runner ended without finishing the job.")
        progress.refresh(job)
