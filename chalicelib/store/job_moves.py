"""Moves of jobs between statuses, by the transition table: the one write of a job's status after it is created,
written alone (``transition``) or planned from the job as read for its build's transaction (``planned_move``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from pynamodb.exceptions import UpdateError

from chalicelib.core.jobs import NO_FIELDS, Job, JobCounts, MoveFields
from chalicelib.core.status import Event, Status, next_status
from chalicelib.store.job_forms import artifact_item, counts_item
from chalicelib.store.jobs import LEASED, WAITING, job_from_model
from chalicelib.store.models import JobModel
from chalicelib.store.transactions import is_condition_failure


@dataclass(frozen=True)
class JobMove:
    """One move of a job by the transition table, planned from the job as read: the write, its condition, and
    the job as the write leaves it (for a transaction, which returns nothing)."""

    job_id: str
    actions: list[Any]
    condition: Any
    after: Job


def planned_move(job: Job, event: Event, fields: MoveFields = NO_FIELDS) -> JobMove | None:
    """The move ``transition`` would write for ``job`` in its status as read; None when the event does not apply
    to that status. The write holds only while the job is still in that status (and, with ``fields.holder``, while
    its token still hashes to it), so ``after`` is what it leaves whenever it succeeds."""
    now = datetime.now(UTC)
    write = _write(Status(job.status), event, now, fields)
    if write is None:
        return None
    actions, condition, after_status = write
    return JobMove(job.job_id, actions, condition, _after(job, event, after_status, now, fields))


def transition(job_id: str, current: Status, event: Event, fields: MoveFields = NO_FIELDS) -> Job | None:
    """Apply ``event`` to a job that is in ``current``, as the transition table says: the one write of a job's status
    after it is created (alone here, or in its build's transaction through ``planned_move``). The job as it is
    after the move (the write returns it); None when the event does not apply to ``current`` or the job is not in
    ``current`` any more (a lost race, a duplicate delivery: nothing is written), or, with ``fields.holder``, when
    its token no longer hashes to it (another attempt holds the job now).

    What comes with the move follows from it: a claim leases the job (until ``fields.lease_expires``, for the runner
    whose token hashes to ``fields.token_hash``, the only credential it gets); a move to a final status drops the
    lease and the token and keeps the ``message``, ``counts`` and ``artifacts`` of ``fields``; a cancel of a running
    job keeps its ``message`` (who cancelled it); a re-queue forgets the last run and where it ran.
    """
    write = _write(current, event, datetime.now(UTC), fields)
    if write is None:
        return None
    actions, condition, _ = write
    model = JobModel(job_id)
    try:
        model.update(actions=actions, condition=condition)
    except UpdateError as error:
        if is_condition_failure(error):
            return None
        raise
    return job_from_model(model)


def _write(current: Status, event: Event, now: datetime, fields: MoveFields) -> tuple[list[Any], Any, Status] | None:
    """The update actions and condition of a move from ``current``, and the status it leads to."""
    after = next_status(current, event)
    if after is None:
        return None
    actions: list[Any] = [JobModel.status.set(str(after)), JobModel.updated.set(now)]
    if event is Event.CLAIM:
        actions += _claimed(now, fields)
    elif event is Event.REQUEUE:
        actions += _queued_again()
    if after.finished:
        actions += _finished(now, fields)
    elif event is Event.CANCEL and fields.message is not None:  # who cancelled it: its runner's last line says so
        actions.append(JobModel.message.set(fields.message))
    condition = JobModel.status == str(current)
    if fields.holder is not None:
        condition &= JobModel.token_hash == fields.holder
    return actions, condition, after


def _after(job: Job, event: Event, status: Status, now: datetime, fields: MoveFields) -> Job:
    """``job`` as ``_write``'s actions leave it."""
    after = replace(job, status=str(status), updated=now)
    if event is Event.CLAIM:
        token_hash = fields.token_hash if fields.token_hash is not None else job.token_hash
        after = replace(after, started=now, attempts=job.attempts + 1, lease_expires=fields.lease_expires, message=None)
        after = replace(after, token_hash=token_hash)
    elif event is Event.REQUEUE:
        after = replace(after, started=None, finished=None, message=None, counts=JobCounts(), artifacts=[])
        after = replace(after, reported=0, reported_outside=0, executor=None, run_on=None, external_id=None)
        after = replace(after, agent=None)
    if event is Event.CANCEL and not status.finished and fields.message is not None:
        after = replace(after, message=fields.message)
    if status.finished:
        after = replace(after, finished=now, lease_expires=None, token_hash=None)
        if fields.message is not None:
            after = replace(after, message=fields.message)
        if fields.counts is not None:
            after = replace(after, counts=fields.counts)
        if fields.artifacts is not None:
            after = replace(after, artifacts=fields.artifacts)
    return after


def _claimed(now: datetime, fields: MoveFields) -> list[Any]:
    if fields.lease_expires is None:
        raise ValueError("a claim leases the job: lease_expires is needed")
    actions = [
        JobModel.started.set(now),
        JobModel.attempts.add(1),
        JobModel.leased.set(LEASED),
        JobModel.lease_expires.set(fields.lease_expires),
        JobModel.waiting.remove(),  # claimed: nothing left to re-send
        JobModel.sent_at.remove(),
        JobModel.message.remove(),  # what it said while it waited (for a build agent)
    ]
    if fields.token_hash is not None:
        actions.append(JobModel.token_hash.set(fields.token_hash))
        actions.append(JobModel.credentials_taken.remove())  # this attempt's runner may take them
    return actions


def _finished(now: datetime, fields: MoveFields) -> list[Any]:
    actions = [
        JobModel.finished.set(now),
        JobModel.leased.remove(),
        JobModel.lease_expires.remove(),
        JobModel.token_hash.remove(),  # the runner's token dies with the job
        JobModel.waiting.remove(),  # a job cancelled while queued: nothing left to send
        JobModel.sent_at.remove(),
    ]
    if fields.message is not None:
        actions.append(JobModel.message.set(fields.message))
    if fields.counts is not None:
        actions.append(JobModel.counts.set(counts_item(fields.counts)))
    if fields.artifacts is not None:
        actions.append(JobModel.artifacts.set([artifact_item(artifact) for artifact in fields.artifacts]))
    return actions


def _queued_again() -> list[Any]:
    """A re-run of the incomplete jobs: the job's last run is forgotten, and its message is sent until claimed; it is
    placed on an executor again when dispatched (an agent deleted since, one registered since)."""
    return [
        JobModel.started.remove(),
        JobModel.finished.remove(),
        JobModel.message.remove(),
        JobModel.counts.remove(),
        JobModel.artifacts.remove(),
        JobModel.reports.remove(),
        JobModel.outside_reports.remove(),
        JobModel.report_bytes.remove(),
        JobModel.outside_report_bytes.remove(),
        JobModel.cache_bytes.remove(),
        JobModel.executor.remove(),
        JobModel.run_on.remove(),
        JobModel.external_id.remove(),
        JobModel.agent.remove(),  # the build agent that took the last run
        JobModel.waiting.set(WAITING),
        JobModel.sent_at.set(int(time.time())),
    ]


def claim_job(job_id: str, lease_expires: int, token_hash: str | None = None) -> Job | None:
    """queued -> running for the dispatcher or agent that wins: the job as claimed (the claim's write returns it);
    a duplicate delivery loses and gets None."""
    return transition(
        job_id, Status.QUEUED, Event.CLAIM, MoveFields(lease_expires=lease_expires, token_hash=token_hash)
    )
