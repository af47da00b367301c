"""Jobs whose runner is gone: a lease that ran out (the sweeper's, every minute), a message that failed every
delivery (a dead-letter queue's), a local runner that ended without finishing its job (killed, crashed), a local
stack that stopped while its jobs ran. Each such job ends failed, its message and its log's last line saying why,
and what it belongs to follows (domain/execution/progress.py), unless its CodeBuild build is still starting."""

from __future__ import annotations

import logging
import time

from chalicelib.config import settings
from chalicelib.core.jobs import Job, MoveFields
from chalicelib.core.status import Event, Status
from chalicelib.domain.execution.progress import move, refresh
from chalicelib.executors import kinds
from chalicelib.store import blobs, logs
from chalicelib.store import jobs as job_store

log = logging.getLogger(__name__)
STACK_STOPPED = (
    "The service stopped while this job ran (conveyor local was stopped or killed), and its runner with it: the job "
    "failed. Run the build again to retry it."
)
_EVERY_LEASE = 2**62  # later than any lease: every running job's has expired by then


def expire_leases(now: int | None = None) -> int:
    """End as failed every running job whose runner stopped renewing its lease; returns how many."""
    now = int(time.time()) if now is None else now
    return sum(end_expired(job, now) for job in job_store.expired_leases(now))


def end_expired(job: Job, now: int) -> bool:
    """End a job whose lease ran out before ``now`` as failed; False when it goes on (its CodeBuild build is still
    starting, or CodeBuild cannot be asked and the build could still run: the lease is renewed, and the sweep goes on
    to others) or another write came first."""
    reason = kinds.of(job.executor).lost_reason(job, now)
    if reason is None:
        job_store.renew_lease(job.job_id, now + settings().lease_seconds)
        return False
    return end_lost(job, reason)


def end_lost(job: Job, reason: str, holder: str | None = None) -> bool:
    """End a running job whose runner is gone: failed (stopped, if it was being cancelled) with ``reason`` as its
    message and as its log's last line; with ``holder``, only while its token is still that one. False when another
    write came first (the runner finished it after all, a re-run claimed it): the log is left as that one wrote it."""
    prefix = blobs.prefix_of(job)
    try:
        added = logs.append_line(prefix, reason)
    except Exception:  # the job ends all the same: its message says why
        log.exception("job %s: its log could not say why it ended", job.job_id)
        added = None
    event = Event.STOPPED if Status(job.status) is Status.CANCELLING else Event.FAIL
    if move(job, event, MoveFields(message=reason, holder=holder)) is None:
        if added is not None:
            logs.drop_chunk(prefix, added)
        return False
    if added is not None:
        try:
            logs.seal_log(prefix, added + 1)
        except Exception:  # a chunk the runner never sent (LogIncomplete), S3 refusing: the log stays as chunks
            log.warning("job %s: its log was not sealed", job.job_id, exc_info=True)
    refresh(job)
    return True


def end_left_running(reason: str = STACK_STOPPED) -> int:
    """At a local stack's start: every job of the stack's own runners still running ends failed, saying the service
    stopped while it ran (its runners died with it); how many. Build agents' and CodeBuild's jobs run on."""
    left = [job for job in job_store.expired_leases(_EVERY_LEASE, limit=1000) if kinds.of(job.executor).runs_in_service]
    return sum(end_lost(job, reason) for job in left)


def abandon_job(job_id: str, reason: str) -> None:
    """A job whose message could not be handled (dead-letter queue): it ends failed if still open."""
    job = job_store.get_job(job_id)
    if job is None or Status(job.status).finished:
        return
    if Status(job.status) in (Status.RUNNING, Status.CANCELLING):
        end_lost(job, reason)
        return
    move(job, Event.FAIL, MoveFields(message=reason))  # queued: it never ran, and has no log to end
    refresh(job)
