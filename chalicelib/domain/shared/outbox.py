"""Messages that must follow a write: sent right after it, and sent again by the sweeper when that send failed.

A send that follows a DynamoDB write can fail after the write stood, and nothing else would ever send the message:
a queued job would wait for ever, a build's notifications would never go. So each such message is recorded with
its write, and stays recorded until it is no longer owed:

- a queued job's message by the job itself (the jobs table's wait index, one partition per queue), until the job
  is claimed or ends: build jobs (jobs queue), deployment jobs the service delivers (deployments queue), and
  agents' deployment jobs (their deadline message, from when it is due);
- a finished build's or deployment's notifications by the outbox (store/outbox.py), recorded in the transaction
  that finishes it and forgotten once sent.

The sweeper sends again what is still owed UNSENT_SECONDS later. Claims are conditional writes and notifications
are sent once per revision, so a message sent twice still acts once.
"""

from __future__ import annotations

import logging
import time

from chalicelib.core.jobs import Job
from chalicelib.core.messages import AgentDeadline, Announce, Message, RunDeploymentJob, RunJob
from chalicelib.store import jobs as job_store
from chalicelib.store import outbox as outbox_store
from chalicelib.store import queues
from chalicelib.store.outbox import Owed

log = logging.getLogger(__name__)
UNSENT_SECONDS = 300  # longer than a busy queue keeps a job waiting: a resend is for a lost message, not a slow one
_WAITING_JOBS: dict[str, type[RunJob] | type[RunDeploymentJob] | type[AgentDeadline]] = {
    job_store.WAITING: RunJob,
    job_store.DELIVERING: RunDeploymentJob,
    job_store.AGENT_DUE: AgentDeadline,
}


def send(messages: list[Message], delay_seconds: int = 0) -> bool:
    """Send messages whose write is done; a failed send is left to the sweeper (they are recorded). Whether sent."""
    try:
        queues.send(messages, delay_seconds)
    except queues.SendFailed as error:
        log.warning("%s messages not sent now (%s): the sweeper sends them again", len(messages), type(error).__name__)
        return False
    return True


def send_jobs(jobs: list[Job]) -> None:
    """Queue new or re-run build jobs (with their build's keys: their dispatch reads job and build at once)."""
    send([RunJob(job.job_id, job.project_id, job.build_id) for job in jobs])


def send_owed(owed: Owed) -> None:
    """Send a message the outbox recorded with its write, and forget it once sent (an announcement, which names
    its entry, is forgotten by its receiver once handled: ``handled``); never raises."""
    try:
        if send([owed.message]) and not (isinstance(owed.message, Announce) and owed.message.owed_id):
            outbox_store.forget(owed.message_id)
    except Exception:  # the write it follows stands whatever happens here: the sweeper sends it again
        log.exception("the message %s could not be sent or forgotten", owed.message_id)


def handled(message: Announce) -> None:
    """An announcement was handled (or given up on): its outbox entry, if it names one, is forgotten; never
    raises (an entry left is sent again by the sweeper, and its receiver finds it done)."""
    if message.owed_id is None:
        return
    try:
        outbox_store.forget(message.owed_id)
    except Exception:
        log.exception("the outbox entry %.64s could not be forgotten", message.owed_id)


def resend_owed(now: float | None = None) -> list[Message]:
    """Send again every message still owed UNSENT_SECONDS after it was sent (or due); what was sent."""
    cutoff = int((time.time() if now is None else now) - UNSENT_SECONDS)
    resent: list[Message] = []
    for partition, kind in _WAITING_JOBS.items():
        unclaimed = job_store.unclaimed_jobs(partition, cutoff)
        again: list[Message] = [kind(job_id) for job_id in unclaimed if job_store.note_resent(job_id)]
        if again and send(again):  # not sent: the next sweep finds them again, 5 minutes on
            resent += again
    for message_id, message in outbox_store.owed_before(cutoff):
        if message is None:  # an entry this version cannot read (a newer one's, after a rollback): it never will
            log.error("outbox entry %s cannot be read: dropped", message_id)
            outbox_store.forget(message_id)
            continue
        if send([message]):  # not sent: the next sweep tries this one again, and the others go on
            outbox_store.forget(message_id)
            resent.append(message)
    return resent
