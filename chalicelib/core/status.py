"""Job and build status: a job's transitions as a table, and a build's status derived from its jobs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from chalicelib.core.reprs import FieldsRepr


class Status(StrEnum):
    QUEUED = "queued"
    STARTING = "starting"
    RUNNING = "running"
    CANCELLING = "cancelling"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """Whether nothing but a re-run changes this status any more (success, failed, cancelled)."""
        return self in _FINISHED


_FINISHED = frozenset({Status.SUCCESS, Status.FAILED, Status.CANCELLED})


class Event(StrEnum):
    CLAIM = "claim"  # a runner takes a queued job
    SUCCEED = "succeed"
    FAIL = "fail"  # the job failed; also a job that cannot start, and an expired lease
    CANCEL = "cancel"  # a user cancels
    STOPPED = "stopped"  # the runner stopped a cancelling job
    REQUEUE = "requeue"  # re-run incomplete puts a failed/cancelled job back in the queue


# Every transition there is; any other (status, event) pair is a lost race or a duplicate.
# Nothing in Conveyor makes a job `starting` (a runner claims a queued job and runs it at once); the status is
# part of AppVeyor's enum, so it leaves the way a queued job does, except that a cancel has a runner to stop.
_TRANSITIONS: dict[tuple[Status, Event], Status] = {
    (Status.QUEUED, Event.CLAIM): Status.RUNNING,
    (Status.QUEUED, Event.FAIL): Status.FAILED,  # cannot start: unsupported source, lease expired before a claim
    (Status.QUEUED, Event.CANCEL): Status.CANCELLED,  # no runner to stop
    (Status.STARTING, Event.CLAIM): Status.RUNNING,
    (Status.STARTING, Event.FAIL): Status.FAILED,
    (Status.STARTING, Event.CANCEL): Status.CANCELLING,
    (Status.RUNNING, Event.SUCCEED): Status.SUCCESS,
    (Status.RUNNING, Event.FAIL): Status.FAILED,
    (Status.RUNNING, Event.CANCEL): Status.CANCELLING,
    (Status.CANCELLING, Event.STOPPED): Status.CANCELLED,
    (Status.CANCELLING, Event.SUCCEED): Status.CANCELLED,  # the cancel wins over a job that finished meanwhile
    (Status.CANCELLING, Event.FAIL): Status.CANCELLED,
    (Status.FAILED, Event.REQUEUE): Status.QUEUED,
    (Status.CANCELLED, Event.REQUEUE): Status.QUEUED,
}


def next_status(status: Status, event: Event) -> Status | None:
    """The job's status after `event`, or None when the event does not apply (a lost race or a duplicate)."""
    return _TRANSITIONS.get((status, event))


@dataclass(frozen=True, repr=False)
class JobState(FieldsRepr):
    """What a build's status is computed from, of each of its jobs."""

    status: Status
    allow_failure: bool


def counts_as_failure(job: JobState) -> bool:
    """Whether the job failed the build: failed and not allowed to (matrix.fast_finish cancels the rest on it)."""
    return job.status is Status.FAILED and not job.allow_failure


def build_status(jobs: Sequence[JobState]) -> Status:
    """A build's status from its jobs (facts §1.2).

    In progress: ``queued`` while no job has left the queue (or there are no jobs yet); ``cancelling`` while every
    unfinished job is being cancelled; otherwise ``running``. Finished: ``failed`` when a job that may not fail
    failed, or when every job may fail and one did; else ``cancelled`` when a job was cancelled; else ``success``.
    """
    unfinished = [job.status for job in jobs if not job.status.finished]
    if unfinished:
        if all(status is Status.CANCELLING for status in unfinished):
            return Status.CANCELLING
        if len(unfinished) == len(jobs) and all(status is Status.QUEUED for status in unfinished):
            return Status.QUEUED
        return Status.RUNNING
    if not jobs:
        return Status.QUEUED
    failed = [job for job in jobs if job.status is Status.FAILED]
    if any(counts_as_failure(job) for job in failed) or (failed and all(job.allow_failure for job in jobs)):
        return Status.FAILED
    if any(job.status is Status.CANCELLED for job in jobs):
        return Status.CANCELLED
    return Status.SUCCESS
