"""A build's state as it is written: a new build with its jobs (store/jobs.py) and its number, its status as its jobs
move (store/job_moves.py), and with each its project's last-build summary, in one transaction."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from pynamodb.exceptions import UpdateError

from chalicelib.core.builds import Build, summary_of
from chalicelib.core.jobs import Job
from chalicelib.errors import Conflict
from chalicelib.store import outbox, reports
from chalicelib.store.builds import build_from_model, get_build_by_version, version_claim
from chalicelib.store.job_moves import JobMove
from chalicelib.store.jobs import job_model
from chalicelib.store.models import BuildModel, JobModel, ProjectModel
from chalicelib.store.outbox import Owed
from chalicelib.store.projects import summary_item
from chalicelib.store.transactions import (
    CONDITION_FAILED,
    atomically,
    cancellation_codes,
    claim,
    is_condition_failure,
    is_transaction_conflict,
    release,
)

# a start whose build number other starts took meanwhile tries the next, after a random wait of up to 10 ms, doubled
# at each try up to 1 s (9.3 s in all at most): fifty starts of one project at once took up to 12 tries in tests
_START_ATTEMPTS = 16
_LONGEST_WAIT_SECONDS = 1.0
# a number whose version a build of another number holds is passed on, and counts as no attempt: the versions builds
# took are skipped (each once: the project's number stays past it), up to this many in one start
_VERSION_SKIPS = 200


def _build_model(build: Build) -> BuildModel:
    return BuildModel(
        build.project_id,
        build.build_id,
        account_id=build.account_id,
        build_number=build.build_number,
        version=build.version,
        branch=build.branch,
        branch_key=f"{build.project_id}#{build.branch}",
        ref=build.ref,
        commit=build.commit,
        pull_request=build.pull_request,
        configuration=build.configuration,
        request_variables=build.request_variables or None,
        flags=build.flags or None,
        job_ids=build.job_ids,
        messages=build.messages or None,
        status=build.status,
        created=build.created,
        revision=1,
        project_slug=build.project_slug,
    )


def add_build(build: Build, jobs: list[Job], version_of: Callable[[int], str], untrusted: bool = False) -> Build | None:
    """Store a new build and its jobs at once, numbered by its project: ``build`` carries the project's next build
    number as read, which moves on in the same step, and the build is shown as the project's last unless the
    project shows a newer one. When another start took the number meanwhile, the project is read again and the
    build tried with the next one (and its version, ``version_of`` it); so it is when a build of another number
    holds its version. ``untrusted``: its jobs wait only for build agents that take pull requests. The build as
    stored; None when the project is gone; Conflict when its version exists in the project already (a build of its
    number has it), when other starts kept taking its number, or when _VERSION_SKIPS numbers in a row had their
    versions taken (passed on: the next start goes on from there).
    """
    project = _project_key(build)
    if project is None:
        return None
    summary = True
    races = skips = 0
    while races < _START_ATTEMPTS and skips < _VERSION_SKIPS:
        try:
            _add_build(build, jobs, project, summary, untrusted)
            return build
        except Conflict as error:
            refused, codes = error, cancellation_codes(error)
        # the project's item is the last: another item's condition refused while the project's held (its number
        # was as read) is a version taken (or a build or job id, never in practice)
        if codes is None:
            raise refused
        version_taken = CONDITION_FAILED in codes[:-1]
        if codes[-1] is None and version_taken:
            _pass_number(project, build.build_number)
            if not _taken_by_another_number(build, version_of):
                raise refused
            skips += 1
        # else the number was taken by another start, the project shows a newer build or is gone, or an item was
        # busy with another transaction (a build of the project writing its state): a moment later, read it again
        else:
            races += 1
            if races < _START_ATTEMPTS:
                time.sleep(random.uniform(0, min(_LONGEST_WAIT_SECONDS, 0.01 * 2 ** (races - 1))))
        current = _project_as_now(project)
        if current is None or int(current.project_id) != build.project_id:
            return None
        number = int(current.next_build_number)  # a project stored before builds numbered this way reads 1
        if number == build.build_number and version_taken:
            _pass_number(project, number)
            if not _taken_by_another_number(build, version_of):
                raise refused  # the number was still this build's: its version is taken
            skips += 1
            continue  # the next try finds the number passed on
        if number != build.build_number:
            build = replace(build, build_number=number, version=version_of(number))
        summary = current.last_build_id is None or int(current.last_build_id) <= build.build_id
    if skips >= _VERSION_SKIPS:  # the numbers are passed on: the next start goes on from there
        raise Conflict(
            f"The versions of the project's next {skips} build numbers are taken by other builds: they were skipped "
            "and this build was not started. Try again."
        )
    raise Conflict(
        "Other builds of this project were starting or changing at the same moment, every time this build tried to "
        "take its number: it was not started. Try again."
    )


def _add_build(build: Build, jobs: list[Job], project: ProjectModel, summary: bool, untrusted: bool) -> None:
    """One transaction: the version claim, the build, its jobs, and the project's next build number moved on if it
    is still the build's (with the project's summary, when ``summary``: unless the project shows a newer build)."""
    _new_job = JobModel.job_id.does_not_exist()
    number = build.build_number
    actions = [ProjectModel.next_build_number.set(number + 1), *(_last_build_actions(build) if summary else [])]
    condition = _not_newer(build) if summary else ProjectModel.project_id == build.project_id
    with atomically(f"Build version '{build.version}' already exists in this project.") as transaction:
        claim(transaction, version_claim(build.project_id, build.version))
        transaction.save(_build_model(build), condition=BuildModel.build_id.does_not_exist())
        for job in jobs:
            transaction.save(job_model(job, pull_request=untrusted), condition=_new_job)
        transaction.update(project, actions=actions, condition=condition & _next_number_is(number))


def _taken_by_another_number(build: Build, version_of: Callable[[int], str]) -> bool:
    """Whether the start's version is held by a build of another number (one that took it with UpdateBuild
    -Version, or a claim left behind) and the next number gives another version: the start then skips the number,
    as it skips one another start took, rather than stop the project's builds at a version a build chose (issue
    34, finding 10). A build of this very number (the number set back by hand) still refuses it."""
    if version_of(build.build_number + 1).lower() == build.version.lower():  # a version without {build}
        return False
    holder = get_build_by_version(build.project_id, build.version)
    return holder is None or holder.build_number != build.build_number


def _pass_number(project: ProjectModel, number: int) -> None:
    """A start refused because the version of ``number`` is taken passes the number on (unless another start did),
    as a counter's number would have been used up: the next start tries the next version, not this one again."""
    try:
        project.update(actions=[ProjectModel.next_build_number.set(number + 1)], condition=_next_number_is(number))
    except UpdateError as error:
        if not is_condition_failure(error):
            raise


def _next_number_is(number: int) -> Any:
    """The project's next build number is still ``number`` (a project stored without one is at 1)."""
    if number == 1:
        return ProjectModel.next_build_number.does_not_exist() | (ProjectModel.next_build_number == 1)
    return ProjectModel.next_build_number == number


def _project_as_now(key: ProjectModel) -> ProjectModel | None:
    """The project's item as it is now (a consistent read), or None."""
    try:
        return ProjectModel.get(key.account_id, key.slug, consistent_read=True)
    except ProjectModel.DoesNotExist:
        return None


class Saved(Enum):
    """How a write of a build's state went."""

    WRITTEN = "written"
    BUILD_CHANGED = "build changed"  # since it was read, or an item was busy: read it again and derive again
    JOB_REFUSED = "job refused"  # the job's move with it no longer holds: the job moved, or another attempt holds it


def save_build_state(
    build: Build, after: Build, owed: Owed | None = None, move: JobMove | None = None, claim: bool = False
) -> Saved:
    """Write the status, start and finish a build derives from its jobs (as in ``after``), if nobody did since
    ``build`` was read; nothing is written otherwise.

    In the same step: the project's last-build summary, unless the project shows a newer build (then the build
    goes without it, a second call); a message ``owed`` (its notifications) recorded in the outbox; and ``move``,
    the move of one of its jobs that ``after`` derives from (the revision moves on even when the state stays, so
    that a job moving at the same moment derives again from this one's move).

    ``claim``: ``move`` claims a job, and the build runs from then on whatever its other jobs did meanwhile (a
    build with a running job is running; it started when its first job did): written whatever its revision, so
    that a matrix's jobs claimed at once do not refuse each other. The revision moves on all the same.
    """
    write = _StateWrite(build, after, owed, move, claim, datetime.now(UTC))
    changed = (build.status, build.started, build.finished) != (after.status, after.started, after.finished)
    project = _project_key(build) if changed else None
    try:
        _write_state(write, project)
        return Saved.WRITTEN
    except Conflict as error:
        refused = _refused(error, write, project)
    if refused is not None and refused.job == CONDITION_FAILED:
        return Saved.JOB_REFUSED
    if refused is None or not refused.by_summary_alone:
        return Saved.BUILD_CHANGED  # the build changed meanwhile, or an item was busy: its caller reads it again
    if owed is None and move is None:  # the project shows a newer build: the build goes alone, one write
        return _save_build_alone(write)
    try:  # the build goes without its summary, with what it carries
        _write_state(write, None)
    except Conflict as error:
        refused = _refused(error, write, None)
        return Saved.JOB_REFUSED if refused is not None and refused.job == CONDITION_FAILED else Saved.BUILD_CHANGED
    return Saved.WRITTEN


@dataclass(frozen=True)
class _StateWrite:
    """One write of a build's state, by what it writes: ``build`` as read (the revision it holds at), its state
    ``after``, the message it ``owed``, the ``move`` of one of its jobs, whether that move is a ``claim``, and
    ``now``, its moment (a try without the project's summary writes the same)."""

    build: Build
    after: Build
    owed: Owed | None
    move: JobMove | None
    claim: bool
    now: datetime


@dataclass(frozen=True)
class _Refused:
    """Why the transaction of a ``_StateWrite`` was cancelled, by the item its code names (``CONDITION_FAILED``,
    a transaction conflict; None: not that item, or no such item in the transaction)."""

    job: str | None  # the job's move: it moved meanwhile, or another attempt holds it
    build: str | None  # the build: another write moved its revision on
    summary: str | None  # the project's last-build summary: the project shows a newer build, or is gone

    @property
    def by_summary_alone(self) -> bool:
        """Only the project's summary refused (the build's own write held): the build may go without it."""
        return self.build is None and self.summary == CONDITION_FAILED


def _write_state(write: _StateWrite, project: ProjectModel | None) -> None:
    """One transaction: the job's move, the build's state, the last-build summary of ``project`` (None: without
    it), and the message owed."""
    with atomically("The build changed meanwhile.") as transaction:
        if write.move is not None:
            transaction.update(JobModel(write.move.job_id), actions=write.move.actions, condition=write.move.condition)
        transaction.update(_build_item(write), actions=_state_actions(write), condition=_state_condition(write))
        if project is not None:
            transaction.update(project, actions=_last_build_actions(write.after), condition=_not_newer(write.build))
        if write.owed is not None:
            outbox.record(transaction, write.owed)


def _refused(error: Conflict, write: _StateWrite, project: ProjectModel | None) -> _Refused | None:
    """The codes of the items of ``_write_state``'s transaction, by item; None when DynamoDB gave no reasons. Its
    updates come last (the outbox's record is a put: before them), in the order it adds them."""
    codes = cancellation_codes(error)
    if codes is None:
        return None
    updates = ["job"] * (write.move is not None) + ["build"] + ["summary"] * (project is not None)
    by_item = dict(zip(updates, codes[-len(updates) :], strict=False))
    return _Refused(job=by_item.get("job"), build=by_item.get("build"), summary=by_item.get("summary"))


def _save_build_alone(write: _StateWrite) -> Saved:
    """The build's state alone, one write: it carries no job's move and owes nothing."""
    try:
        _build_item(write).update(actions=_state_actions(write), condition=_state_condition(write))
    except UpdateError as error:
        if is_condition_failure(error) or is_transaction_conflict(error):
            return Saved.BUILD_CHANGED
        raise
    return Saved.WRITTEN


def _build_item(write: _StateWrite) -> BuildModel:
    return BuildModel(write.build.project_id, write.build.build_id)


def _state_actions(write: _StateWrite) -> list[Any]:
    """The build's status, start and finish as in ``after``, its revision moved on; a claim's start is the first
    claim's (one the build has stays)."""
    after, now = write.after, write.now
    if write.claim:
        started = BuildModel.started.set(BuildModel.started | (after.started or now))
    else:
        started = BuildModel.started.set(after.started) if after.started else BuildModel.started.remove()
    return [
        BuildModel.status.set(after.status),
        BuildModel.updated.set(now),
        BuildModel.revision.add(1),
        started,
        BuildModel.finished.set(after.finished) if after.finished else BuildModel.finished.remove(),
    ]


def _state_condition(write: _StateWrite) -> Any:
    """Nobody wrote the build's state since it was read (its revision is as read); a claim's, only that the build
    is still there."""
    return BuildModel.build_id.exists() if write.claim else BuildModel.revision == write.build.revision


def _project_key(build: Build) -> ProjectModel | None:
    """The key of the build's project: stored on the build since it was (an older build's is looked up)."""
    if build.project_slug is not None:
        return ProjectModel(build.account_id, build.project_slug)
    for model in ProjectModel.by_id.query(build.project_id, limit=1):
        return ProjectModel(model.account_id, model.slug)
    return None


def _last_build_actions(build: Build) -> list[Any]:
    return [
        ProjectModel.last_build.set(summary_item(summary_of(build))),
        ProjectModel.last_build_id.set(build.build_id),
    ]


def _not_newer(build: Build) -> Any:
    """The project is still the build's (not deleted, nor another of the same name made since) and shows no build
    newer than ``build``."""
    return (ProjectModel.project_id == build.project_id) & (
        ProjectModel.last_build_id.does_not_exist() | (ProjectModel.last_build_id <= build.build_id)
    )


def replace_last_build(account_id: int, slug: str, build: Build | None) -> None:
    """After a delete: the project's newest remaining build (or none) becomes its last build."""
    actions: list[Any]
    if build is None:
        actions = [ProjectModel.last_build.remove(), ProjectModel.last_build_id.remove()]
    else:
        actions = _last_build_actions(build)
    try:
        ProjectModel(account_id, slug).update(actions=actions, condition=ProjectModel.slug.exists())
    except UpdateError as error:
        if not is_condition_failure(error):
            raise


def delete_build(build: Build) -> None:
    """Remove a build, its jobs, what they reported and its version claim (its S3 objects are removed by the
    caller)."""
    with atomically("The build changed meanwhile.") as transaction:
        release(transaction, version_claim(build.project_id, build.version))
        transaction.delete(BuildModel(build.project_id, build.build_id))
    for job_id in build.job_ids:
        JobModel(job_id).delete()
    reports.delete_reports(build.job_ids)


def delete_project_builds(project_id: int) -> None:
    """Remove every build and job of a deleted project."""
    for model in BuildModel.query(project_id):
        delete_build(build_from_model(model))
