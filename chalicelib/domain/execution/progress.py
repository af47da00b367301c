"""How builds move: jobs change status by the transition table, and a build follows from its jobs.

Every change is a conditional write. A build job's claim and its end are one transaction with the build's
state they lead to (``move_in_build``), derived from consistent reads of its other jobs under the build's
revision, which every such write moves on: of two jobs finishing at once, the one that writes second finds the
revision moved, reads again, and sees both. Other moves (a cancel, a lost lease) write the job alone, then
derive the build again (``refresh_build``).
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import replace
from datetime import UTC, datetime

from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment
from chalicelib.core.jobs import NO_FIELDS, Job, MoveFields
from chalicelib.core.messages import Announce
from chalicelib.core.status import Event, JobState, Status, build_status, counts_as_failure, next_status
from chalicelib.domain.execution import job_slots
from chalicelib.domain.forges import commit_statuses
from chalicelib.domain.shared import outbox
from chalicelib.executors import kinds
from chalicelib.store import build_states, job_moves
from chalicelib.store import builds as store
from chalicelib.store import deployments as deployment_store
from chalicelib.store import jobs as job_store
from chalicelib.store import outbox as outbox_store
from chalicelib.store.build_states import Saved
from chalicelib.store.outbox import Owed

log = logging.getLogger(__name__)
_REFRESH_ATTEMPTS = 20


def move(job: Job, event: Event, fields: MoveFields = NO_FIELDS) -> Status | None:
    """Apply ``event`` to a job as the transition table says, with what ``fields`` carries; None when it does not
    apply (a lost race). With ``fields.holder``, only while the job's token hashes to it: a runner's word moves its
    own attempt, never the next.

    A write that loses to another reads the job again and applies the event to its new status (a cancel that
    meets a job which has just started still cancels it).
    """
    moved = _move(job, event, fields)
    return Status(moved.status) if moved is not None else None


def _move(job: Job, event: Event, fields: MoveFields) -> Job | None:
    """``move``, answering the job as the move left it (the write returns it)."""
    for _ in range(3):
        moved = job_moves.transition(job.job_id, Status(job.status), event, fields)
        if moved is not None or next_status(Status(job.status), event) is None:
            return moved
        fresh = job_store.get_job(job.job_id)
        if fresh is None:
            return None
        job = fresh
    return None


def finish_job(job: Job, succeeded: bool, fields: MoveFields = NO_FIELDS, build: Build | None = None) -> Status | None:
    """A runner ends its job: success or failure, unless a cancel came first (then it is cancelled); with
    ``fields.holder``, only the attempt whose token hashes to it. ``build``: the job's build, read consistently with
    the job (else it is read here)."""
    return end_job(job, Event.SUCCEED if succeeded else Event.FAIL, fields, build)


def end_job(job: Job, event: Event, fields: MoveFields = NO_FIELDS, build: Build | None = None) -> Status | None:
    """``event`` (success, failure, stopped) ends a job and its build follows, in one write for a build's job;
    the job's status after, None when the event does not apply (a lost race, another attempt's token)."""
    if job.deployment_id is not None:
        status = move(job, event, fields)
        refresh_deployment(job.project_id, job.deployment_id)
        return status
    before = build or store.get_build(job.project_id, job.build_id, consistent=True)
    if before is None:  # deleted meanwhile, with its jobs
        return move(job, event, fields)
    moved = move_in_build(before, job, event, fields)
    status = Status(moved.status) if moved is not None else None
    fails_build = status is Status.FAILED and counts_as_failure(JobState(Status.FAILED, job.allow_failure))
    if fails_build and before.configuration.get("matrixFastFinish"):
        cancel_jobs(before, "Cancelled: another job failed and the matrix finishes fast.")
    return status


def move_in_build(
    build: Build, job: Job, event: Event, fields: MoveFields = NO_FIELDS, attempts: int = _REFRESH_ATTEMPTS
) -> Job | None:
    """Apply ``event`` to a job of ``build`` (both as read consistently), with what ``fields`` carries, and write
    the build's state that follows from it in the same transaction: the job as moved; None when the event does not
    apply (a lost race, a duplicate delivery) or, with ``fields.holder``, another attempt holds the job now.

    A build that changed meanwhile (another of its jobs moved) is read again and its state derived again, with
    the job's move; a job that moved meanwhile (a cancel) is read again and the event applied to its new status.
    After ``attempts`` such rounds (a big matrix whose jobs all move at once) the job moves alone and the build
    follows it as ``refresh_build`` derives it.
    """
    for _ in range(attempts):
        planned = job_moves.planned_move(job, event, fields=fields)
        if planned is None:
            return None
        claim = event is Event.CLAIM  # the build runs from now, whatever its other jobs did: no need to read them
        if claim:
            after = replace(build, status=str(Status.RUNNING), started=build.started or planned.after.started)
            after = replace(after, finished=None)
        else:
            after = _with_state(build, _derived([planned.after, *_others(build, job.job_id)]))
        owed = _owed(build, after)
        saved = build_states.save_build_state(build, after, owed, planned, claim)
        if saved is Saved.WRITTEN:
            _written(build, after, owed)
            return planned.after
        if saved is Saved.JOB_REFUSED:
            fresh = job_store.get_job(job.job_id)
            if fresh is None or (fields.holder is not None and fresh.token_hash != fields.holder):
                return None
            job = fresh
        time.sleep(random.uniform(0, 0.05))  # jobs of one build moving at once: not all again at the same moment
        again = store.get_build(build.project_id, build.build_id, consistent=True)
        if again is None:  # deleted meanwhile, with its jobs
            return None
        build = again
    moved = _move(job, event, fields)
    if moved is not None:
        refresh_build(moved.project_id, moved.build_id)
    return moved


def _others(build: Build, job_id: str) -> list[Job]:
    """The build's other jobs, read consistently (none for a one-job build: no read)."""
    others = [other for other in build.job_ids if other != job_id]
    return job_store.get_jobs(others) if others else []


def _with_state(build: Build, state: tuple[Status, datetime | None, datetime | None]) -> Build:
    status, started, finished = state
    return replace(build, status=str(status), started=started, finished=finished)


def _owed(build: Build, after: Build) -> Owed | None:
    """The announcement a write owes that finishes the build (its notifications), recorded with it."""
    if not Status(after.status).finished or Status(build.status).finished:
        return None
    key = None if build.project_slug is None else (build.account_id, build.project_slug)
    return outbox_store.owe(Announce(build.project_id, build.revision + 1, build_id=build.build_id, project_key=key))


def _announce(build: Build, after: Build, owed: Owed | None) -> None:
    """What follows a build's new state: its announcement sent, its commit status queued."""
    if owed is not None:
        outbox.send_owed(owed)
    commit_statuses.announce_change(build, after)


def _written(build: Build, after: Build, owed: Owed | None) -> None:
    """What follows a job's move and its build's new state: ``_announce``, and under max_jobs, a job that ended
    lets a waiting one go."""
    _announce(build, after, owed)
    _settle_slots(after)


def _settle_slots(build: Build) -> None:
    """Under the build's max_jobs, a job that ended lets a waiting one go."""
    if max_jobs := build.configuration.get("maxJobs"):
        try:
            job_slots.settle(build.project_id, int(max_jobs))
        except Exception:  # the moves stand whatever happens here: the sweeper sends a waiting job again
            log.exception("build %s: its project's job slots could not be settled", build.build_id)


def cancel_jobs(build: Build, message: str) -> None:
    """Queued jobs become cancelled at once; running ones cancelling (their runner stops them)."""
    _cancel(build.job_ids, message)
    refresh_build(build.project_id, build.build_id)


def _cancel(job_ids: list[str], message: str) -> None:
    for job in job_store.get_jobs(job_ids):
        if Status(job.status).finished:
            continue
        if move(job, Event.CANCEL, MoveFields(message=message)) is not Status.CANCELLING:
            continue
        # a run outside the service (a CodeBuild build) stops at once, and the job ends with it; a runner stops its
        # job at its next heartbeat
        if kinds.of(job.executor).stop(job):
            fresh = job_store.get_job(job.job_id)
            if fresh is not None:
                move(fresh, Event.STOPPED, MoveFields(message=message))


def _derived(jobs: list[Job]) -> tuple[Status, datetime | None, datetime | None]:
    """Status, start and finish of a build or deployment, from its jobs."""
    status = build_status([JobState(Status(job.status), job.allow_failure) for job in jobs])
    started = min((job.started for job in jobs if job.started), default=None)
    finished = None
    if status.finished:
        finished = max((job.finished for job in jobs if job.finished), default=datetime.now(UTC))
    return status, started, finished


def refresh_build(project_id: int, build_id: int) -> Build | None:
    """Derive the build's status, start and finish from its jobs, after a move of one of them alone, and write
    them; under max_jobs, a job that ended lets a waiting one go (domain/execution/job_slots.py).

    An unfinished build is written even when its state stays, so that its revision moves on: a job's move with its
    build (``move_in_build``) that read the job moved here before it moved is refused, and derives again. A
    finished build whose state stays is left as it is: its revision names its announcement.
    """
    build = _derive_build(project_id, build_id)
    if build is not None:
        _settle_slots(build)
    return build


def _derive_build(project_id: int, build_id: int) -> Build | None:
    for _ in range(_REFRESH_ATTEMPTS):
        build = store.get_build(project_id, build_id, consistent=True)
        if build is None:
            return None
        after = _with_state(build, _derived(job_store.get_jobs(build.job_ids)))
        unchanged = (build.status, build.started, build.finished) == (after.status, after.started, after.finished)
        if unchanged and Status(build.status).finished:
            return build
        owed = _owed(build, after)
        if build_states.save_build_state(build, after, owed=owed) is Saved.WRITTEN:
            if not unchanged:
                _announce(build, after, owed)
            return after
        time.sleep(0.05)
    log.error("build %s: its status could not be written after %s attempts", build_id, _REFRESH_ATTEMPTS)
    return None


def refresh_deployment(project_id: int, deployment_id: int) -> Deployment | None:
    """Derive the deployment's status, start and finish from its jobs, and write them if they changed."""
    for _ in range(_REFRESH_ATTEMPTS):
        deployment = deployment_store.get_deployment(project_id, deployment_id)
        if deployment is None:
            return None
        status, started, finished = _derived(job_store.get_jobs(deployment.job_ids))
        if (deployment.status, deployment.started, deployment.finished) == (status, started, finished):
            return deployment
        owed = None
        if status.finished and not Status(deployment.status).finished:  # this write finishes it: its notifications
            owed = outbox_store.owe(Announce(project_id, deployment.revision + 1, deployment_id=deployment_id))
        if deployment_store.save_deployment_state(deployment, str(status), started, finished, owed):
            if owed is not None:
                outbox.send_owed(owed)
            return replace(deployment, status=str(status), started=started, finished=finished)
        time.sleep(0.05)
    log.error("deployment %s: its status could not be written", deployment_id)
    return None


def refresh(job: Job) -> None:
    """Re-derive whatever the job belongs to: its deployment, or its build."""
    if job.deployment_id is not None:
        refresh_deployment(job.project_id, job.deployment_id)
    else:
        refresh_build(job.project_id, job.build_id)


def cancel_deployment_jobs(deployment: Deployment, message: str) -> None:
    """Queued deployment jobs become cancelled at once; running ones cancelling."""
    _cancel(deployment.job_ids, message)
    refresh_deployment(deployment.project_id, deployment.deployment_id)
