"""max_jobs: at most N of a project's jobs run at once (AppVeyor's "Max jobs"; appveyor.yml's ``max_jobs: N``).

A job of a build whose configuration sets it carries the number in its spec. Before it is claimed, it takes one of
its project's slots (store/job_slots.py: one conditional write); with none free it stays queued, its message saying
why, and waits. Whenever a job of such a build changes status, the project's slots are settled: slots of jobs that
no longer run are freed, and as many waiting jobs as there are free slots are sent to the jobs queue again, oldest
first. Should a wake-up be lost, the sweeper sends a waiting job's message again five minutes on
(domain/shared/outbox.py), and its dispatcher frees what stale slots it finds. Jobs for build agents take slots alike:
one that finds none free is held back, out of its agents' sight (so a project's many waiting jobs keep no other
project's job from them), until a settle wakes it, or HELD_SECONDS pass. The slots' item notes at most store.MAX_WAITERS
waiting jobs (DynamoDB's item size): a job past that is woken only by its resend, or the end of its hold-back.
"""

from __future__ import annotations

import time

from chalicelib.core.jobs import Job
from chalicelib.core.status import Status
from chalicelib.domain.shared import outbox
from chalicelib.executors import kinds
from chalicelib.store import job_slots as store
from chalicelib.store import jobs as job_store

_RUNNING = (Status.QUEUED, Status.RUNNING, Status.CANCELLING)  # a queued holder is being dispatched
HELD_SECONDS = outbox.UNSENT_SECONDS  # as long as a runner's waiting job waits for the sweeper, should no one wake it


def waiting_message(limit: int) -> str:
    """What a job says while every slot of its project is taken."""
    jobs = "job" if limit == 1 else "jobs"
    return (
        f"Waiting: this project runs at most {limit} {jobs} at once (max_jobs: {limit}); "
        "it starts when one of them finishes."
    )


def limit_of(job: Job) -> int | None:
    """The job's build's max_jobs; None when it sets none."""
    limit = job.spec.get("maxJobs")
    return int(limit) if limit else None


def admit(job: Job) -> bool:
    """Whether the job may start now: it took a slot, or its build sets no max_jobs. A job that may not waits,
    queued and saying why."""
    limit = limit_of(job)
    if limit is None:
        return True
    if store.take_slot(job.project_id, job.job_id, limit):
        return True
    _free_stale(job.project_id, store.slots(job.project_id).holders)
    if store.take_slot(job.project_id, job.job_id, limit):
        return True
    wait(job, limit)
    # A slot freed meanwhile: its settle may have read the waiters before this job was among them.
    return store.take_slot(job.project_id, job.job_id, limit)


def wait(job: Job, limit: int) -> None:
    """The job waits for a slot of its project, saying why: a runner's job until a settle sends it again, a build
    agent's held back from its agents until a settle wakes it (or HELD_SECONDS pass: a lost wake-up)."""
    message = waiting_message(limit)
    if kinds.of(job.executor).pulled:
        job_store.hold_back(job.job_id, message, int(time.time()) + HELD_SECONDS)
    else:
        job_store.note_waiting(job.job_id, message)
    store.wait_for_slot(job.project_id, job.job_id)  # after the job's own write: a settle that sees it wakes it


def settle(project_id: int, limit: int) -> None:
    """Free the slots of jobs that no longer run, and send waiting jobs to the jobs queue for the slots free."""
    slots = store.slots(project_id)
    live = _free_stale(project_id, slots.holders)
    waiters = slots.waiters
    free = limit - len(live)
    if free <= 0 or not waiters:
        return
    jobs = job_store.get_jobs(sorted(waiters))
    waiting = sorted((job for job in jobs if job.status == Status.QUEUED), key=lambda job: (job.build_id, job.number))
    gone = waiters - {job.job_id for job in waiting}
    if gone:
        store.release(project_id, set(), set(gone))
    # each takes its slot when dispatched, or when an agent takes it; one that loses the race waits again
    woken = waiting[:free]
    for job in woken:
        if kinds.of(job.executor).pulled:  # back in its agents' sight
            job_store.wake(job.job_id)
    outbox.send_jobs([job for job in woken if not kinds.of(job.executor).pulled])


def _free_stale(project_id: int, holders: frozenset[str]) -> set[str]:
    """Free the slots held by jobs that ended or are gone; the holders left."""
    if not holders:
        return set()
    live = {job.job_id for job in job_store.get_jobs(sorted(holders)) if job.status in _RUNNING}
    if holders - live:
        store.release(project_id, set(holders - live))
    return live
