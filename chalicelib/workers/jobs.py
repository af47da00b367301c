"""The jobs queue, its dead-letter queue, and the lease sweeper."""

from __future__ import annotations

import logging

from chalice.app import CloudWatchEvent, SQSEvent

from chalicelib.core.messages import RunJob, job_message
from chalicelib.domain.execution import lost_jobs
from chalicelib.domain.shared import outbox
from chalicelib.workers.queue_messages import read_messages

log = logging.getLogger(__name__)


def _messages(event: SQSEvent) -> list[RunJob]:
    return read_messages(event, job_message, log, "a jobs queue message is not a job")


def run_jobs(event: SQSEvent) -> None:
    """A job message: hand the job to its executor (a duplicate delivery finds it claimed and returns)."""
    from chalicelib.domain.execution.dispatch import (
        dispatch_job,  # executors load only where jobs are dispatched: cold start
    )

    for message in _messages(event):
        dispatch_job(message.job_id, message.build_key)


def abandon_jobs(event: SQSEvent) -> None:
    """A job message that failed every delivery: its job ends failed, so no build waits forever."""
    for message in _messages(event):
        lost_jobs.abandon_job(message.job_id, "The job could not be run: its message failed every delivery.")


def sweep_leases(event: CloudWatchEvent | None = None) -> None:
    """Every minute: jobs whose runner stopped renewing its lease end failed, and messages still owed minutes after
    their write (a queued job nobody claimed, a build's notifications) are sent again."""
    ended = lost_jobs.expire_leases()
    if ended:
        log.warning("%s jobs ended failed: their leases expired", ended)
    resent = outbox.resend_owed()
    if resent:
        log.warning("%s messages were sent again: their first send had failed or was lost", len(resent))
