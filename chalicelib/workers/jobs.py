"""The jobs queue, its dead-letter queue, and the lease sweeper."""

from __future__ import annotations

import json
import logging

from chalice.app import CloudWatchEvent, SQSEvent

from chalicelib.core.messages import job_message
from chalicelib.domain import outbox, progress

log = logging.getLogger(__name__)


def _job_ids(event: SQSEvent) -> list[str]:
    ids = []
    for record in event:
        try:
            ids.append(job_message(json.loads(record.body)).job_id)
        except ValueError:  # NotAMessage, or not JSON
            log.error("a jobs queue message is not a job: %.200s", record.body)
    return ids


def run_jobs(event: SQSEvent) -> None:
    """A job message: hand the job to its executor (a duplicate delivery finds it claimed and returns)."""
    from chalicelib.domain.dispatch import dispatch_job  # executors load only where jobs are dispatched: cold start

    for job_id in _job_ids(event):
        dispatch_job(job_id)


def abandon_jobs(event: SQSEvent) -> None:
    """A job message that failed every delivery: its job ends failed, so no build waits forever."""
    for job_id in _job_ids(event):
        progress.abandon_job(job_id, "The job could not be run: its message failed every delivery.")


def sweep_leases(event: CloudWatchEvent | None = None) -> None:
    """Every minute: jobs whose runner stopped renewing its lease end failed, and messages still owed minutes after
    their write (a queued job nobody claimed, a build's notifications) are sent again."""
    ended = progress.expire_leases()
    if ended:
        log.warning("%s jobs ended failed: their leases expired", ended)
    resent = outbox.resend_owed()
    if resent:
        log.warning("%s messages were sent again: their first send had failed or was lost", len(resent))
