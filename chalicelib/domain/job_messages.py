"""The jobs queue's messages: sent after a build's jobs are written, and sent again while no runner claims them.

The send that follows the write can fail (the write stands, the message is lost), and nothing else would ever
send it: so every queued build job carries when its message was last sent (the jobs table's wait index), and the
sweeper sends the message again for a job still queued UNCLAIMED_SECONDS later. A claim is a conditional write,
so a message sent twice still runs the job once.
"""

from __future__ import annotations

import logging
import time

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.store import jobs as job_store
from chalicelib.store import queues

log = logging.getLogger(__name__)
UNCLAIMED_SECONDS = 300  # longer than a busy queue keeps a job waiting: a resend is for a lost message, not a slow one


def send_jobs(job_ids: list[str]) -> None:
    """Queue new or re-run build jobs; a failed send is left to resend_unclaimed_jobs (the jobs are stored)."""
    try:
        queues.send_jobs(job_ids)
    except (BotoCoreError, ClientError, RuntimeError) as error:
        log.warning("%s jobs not queued now (%s): the sweeper sends them again", len(job_ids), type(error).__name__)


def resend_unclaimed_jobs(now: float | None = None) -> list[str]:
    """Send again the message of every build job still queued UNCLAIMED_SECONDS after it was sent; their ids."""
    cutoff = int((time.time() if now is None else now) - UNCLAIMED_SECONDS)
    still_queued = [job_id for job_id in job_store.unclaimed_jobs(cutoff) if job_store.note_resent(job_id)]
    if still_queued:
        queues.send_jobs(still_queued)
    return still_queued
