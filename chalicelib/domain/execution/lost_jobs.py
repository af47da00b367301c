"""Jobs whose runner is gone: a lease that ran out (the sweeper's, every minute), a message that failed every
delivery (a dead-letter queue's). Each such job ends failed, and what it belongs to follows
(domain/execution/progress.py), unless its CodeBuild build is still starting."""

from __future__ import annotations

import logging
import time

from chalicelib.config import settings
from chalicelib.core.jobs import Executor, Job, MoveFields
from chalicelib.core.status import Event, Status
from chalicelib.domain.execution.progress import move, refresh
from chalicelib.executors import job_timeout
from chalicelib.store import jobs as job_store

log = logging.getLogger(__name__)


def expire_leases(now: int | None = None) -> int:
    """End as failed every running job whose runner stopped renewing its lease; returns how many."""
    now = int(time.time()) if now is None else now
    return sum(end_expired(job, now) for job in job_store.expired_leases(now))


def end_expired(job: Job, now: int) -> bool:
    """End a job whose lease ran out before ``now`` as failed; False when it goes on (its CodeBuild build is still
    starting: the lease is renewed) or another write came first."""
    reason: str | None = "The job's runner stopped responding (its lease expired); the job failed."
    if job.executor == Executor.CODEBUILD and job.external_id is not None:
        reason = _codebuild_lost(job, job.external_id, now)
    if reason is None or move(job, Event.FAIL, MoveFields(message=reason)) is None:
        return False
    refresh(job)
    return True


def _codebuild_lost(job: Job, build_id: str, now: int) -> str | None:
    """Why a CodeBuild job whose lease ran out is lost; None while its build is still starting, or CodeBuild cannot
    be asked and the build could still run: its lease is renewed meanwhile (and the sweep goes on to others)."""
    from chalicelib.executors import codebuild  # boto3's CodeBuild client loads only where such a job is looked at

    try:
        reason = codebuild.lost_reason(build_id)
    except codebuild.Unavailable as error:
        log.warning("job %s: %s", job.job_id, error)
        started = job.started.timestamp() if job.started else now
        if not codebuild.outlived(started, job_timeout(Executor.CODEBUILD), now):
            reason = None
        else:
            reason = (
                f"AWS CodeBuild could not be asked about the job's build {build_id}, which cannot be running any more."
            )
    if reason is None:
        job_store.renew_lease(job.job_id, now + settings().lease_seconds)
    return reason


def abandon_job(job_id: str, reason: str) -> None:
    """A job whose message could not be handled (dead-letter queue): it ends failed if still open."""
    job = job_store.get_job(job_id)
    if job is None or Status(job.status).finished:
        return
    if move(job, Event.FAIL, MoveFields(message=reason)) is None and Status(job.status) is Status.CANCELLING:
        move(job, Event.STOPPED, MoveFields(message=reason))
    refresh(job)
