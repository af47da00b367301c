"""Builds: created with their jobs (store/jobs.py), read by project, branch, version and id, changed by conditional
writes."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from pynamodb.exceptions import UpdateError

from chalicelib.core.builds import Build, summary_of
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.errors import Conflict
from chalicelib.store import outbox, reports
from chalicelib.store.batch import get_items
from chalicelib.store.jobs import job_model
from chalicelib.store.models import BuildModel, JobModel, ProjectModel
from chalicelib.store.outbox import Owed
from chalicelib.store.projects import project_from_model, summary_item
from chalicelib.store.transactions import (
    CONDITION_FAILED,
    atomically,
    cancellation_codes,
    claim,
    is_condition_failure,
    is_transaction_conflict,
    release,
)

_CONFLICT_ATTEMPTS = 5  # a single write meeting a transaction on its item: tried again, 20 ms to 320 ms apart


def version_claim(project_id: int, version: str) -> str:
    return f"build-version#{project_id}#{version.lower()}"


def build_from_model(model: BuildModel) -> Build:
    return Build(
        account_id=int(model.account_id),
        project_id=int(model.project_id),
        build_id=int(model.build_id),
        build_number=int(model.build_number),
        version=model.version,
        branch=model.branch,
        ref=model.ref,
        commit=model.commit,
        configuration=model.configuration,
        job_ids=list(model.job_ids),
        status=model.status,
        created=model.created,
        pull_request=model.pull_request,
        request_variables=model.request_variables or {},
        flags=model.flags or {},
        messages=model.messages or [],
        started=model.started,
        finished=model.finished,
        updated=model.updated,
        revision=int(model.revision),
        project_slug=model.project_slug,
    )


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


def add_build(build: Build, jobs: list[Job]) -> None:
    """Store a new build and its jobs at once, shown as its project's last build in the same step unless the
    project shows a newer one (then a second call stores it alone); Conflict when its version exists in the
    project already."""
    project = _project_key(build)
    try:
        _add_build(build, jobs, project)
    except Conflict as error:
        codes = cancellation_codes(error)
        # the project's summary is its last item: any other item's condition refused is a version taken (or a
        # build or job id, never in practice); else the summary was refused (a newer build is shown) or an item
        # was busy with another transaction (builds of the project writing their state), and the build goes alone
        if project is None or codes is None or CONDITION_FAILED in codes[:-1]:
            raise
        _add_build(build, jobs, None)


def _add_build(build: Build, jobs: list[Job], project: ProjectModel | None) -> None:
    _new_job = JobModel.job_id.does_not_exist()
    with atomically(f"Build version '{build.version}' already exists in this project.") as transaction:
        claim(transaction, version_claim(build.project_id, build.version))
        transaction.save(_build_model(build), condition=BuildModel.build_id.does_not_exist())
        for job in jobs:
            transaction.save(job_model(job, pull_request=build.pull_request is not None), condition=_new_job)
        if project is not None:
            transaction.update(project, actions=_last_build_actions(build), condition=_not_newer(build))


def change_version(build: Build, version: str) -> None:
    """A running build's new version (UpdateBuild -Version); Conflict when the project has a build of it already."""
    with atomically(f"Build version '{version}' already exists in this project.") as transaction:
        claim(transaction, version_claim(build.project_id, version))
        release(transaction, version_claim(build.project_id, build.version))
        transaction.update(
            BuildModel(build.project_id, build.build_id),
            actions=[BuildModel.version.set(version), BuildModel.updated.set(datetime.now(UTC))],
            condition=BuildModel.version == build.version,
        )


def take_build_number(account_id: int, slug: str) -> int | None:
    """The project's next build number, moved on atomically (parallel starts get distinct numbers); None when the
    project is gone (deleted while the build was starting)."""
    project = ProjectModel(account_id, slug)
    for attempt in range(_CONFLICT_ATTEMPTS):
        try:
            project.update(actions=[ProjectModel.next_build_number.add(1)], condition=ProjectModel.slug.exists())
            return int(project.next_build_number) - 1
        except UpdateError as error:
            if is_condition_failure(error):
                return None
            # the project's item is in a transaction that moment (a build of it writing its state and the project's
            # summary): DynamoDB refuses the write, and botocore does not try it again
            if not is_transaction_conflict(error) or attempt == _CONFLICT_ATTEMPTS - 1:
                raise
            time.sleep(0.02 * 2**attempt * (1 + random.random()))
    raise AssertionError("unreachable")


def get_build(project_id: int, build_id: int, consistent: bool = False) -> Build | None:
    """The build, or None; ``consistent`` when the read must see every write made before it."""
    try:
        return build_from_model(BuildModel.get(project_id, build_id, consistent_read=consistent))
    except BuildModel.DoesNotExist:
        return None


def get_build_and_project(account_id: int, project_id: int, build_id: int, slug: str) -> tuple[Build, Project] | None:
    """A build and its project (named by its slug) in one read; None when either is gone, or the slug names
    another project now (deleted and made again)."""
    found = get_items([(BuildModel, project_id, build_id), (ProjectModel, account_id, slug)])
    build = next(iter(found.get(BuildModel, [])), None)
    project = next(iter(found.get(ProjectModel, [])), None)
    if not isinstance(build, BuildModel) or not isinstance(project, ProjectModel):
        return None
    if int(project.project_id) != project_id:
        return None
    return build_from_model(build), project_from_model(project)


def get_build_by_id(build_id: int) -> Build | None:
    """A build by its id alone (callers check the account)."""
    for model in BuildModel.by_id.query(build_id, limit=1):
        return build_from_model(model)
    return None


def get_build_by_version(project_id: int, version: str) -> Build | None:
    """The project's build of that version, or None."""
    if not version:  # DynamoDB refuses an empty key rather than finding nothing
        return None
    for model in BuildModel.by_version.query(project_id, BuildModel.version == version, limit=1):
        return build_from_model(model)
    return None


def latest_build(project_id: int) -> Build | None:
    """The project's newest build."""
    for model in BuildModel.query(project_id, scan_index_forward=False, limit=1):
        return build_from_model(model)
    return None


def latest_build_for_branch(project_id: int, branch: str) -> Build | None:
    for model in BuildModel.by_branch.query(f"{project_id}#{branch}", scan_index_forward=False, limit=1):
        return build_from_model(model)
    return None


def list_builds(project_id: int, before_build_id: int | None, limit: int, branch: str | None = None) -> list[Build]:
    """A page of the project's history, newest first, of builds older than ``before_build_id``."""
    condition = None if before_build_id is None else BuildModel.build_id < before_build_id
    if branch is None:
        models: Iterable[BuildModel] = BuildModel.query(project_id, condition, scan_index_forward=False, limit=limit)
    else:
        models = BuildModel.by_branch.query(f"{project_id}#{branch}", condition, scan_index_forward=False, limit=limit)
    return [build_from_model(model) for model in models]


def set_flags(build: Build, flags: dict[str, bool]) -> None:
    """How the build was last started (re-build, re-run of incomplete jobs): its jobs' variables say so."""
    BuildModel(build.project_id, build.build_id).update(actions=[BuildModel.flags.set(flags)])


def add_message(project_id: int, build_id: int, message: dict[str, Any], limit: int) -> bool:
    """Append a message the service has for the build's users, unless it has ``limit`` or one of the same words;
    whether it did. The revision stays: it counts changes of state, which a message is not; a message written
    meanwhile is kept."""
    for _ in range(5):
        build = get_build(project_id, build_id, consistent=True)
        said = any(earlier.get("message") == message.get("message") for earlier in build.messages) if build else True
        if build is None or said or len(build.messages) >= limit:
            return False
        model = BuildModel(project_id, build_id)
        unchanged = BuildModel.messages == build.messages if build.messages else BuildModel.messages.does_not_exist()
        try:
            model.update(actions=[BuildModel.messages.set([*build.messages, message])], condition=unchanged)
        except UpdateError as error:
            if is_condition_failure(error):
                continue
            raise
        return True
    return False


def save_build_state(build: Build, after: Build, owed: Owed | None = None) -> bool:
    """Write the status, start and finish a build derives from its jobs (as in ``after``), if nobody did since
    ``build`` was read; False (nothing written) when somebody did.

    The project's last-build summary changes in the same step unless the project shows a newer build (then the
    build alone is written, a second call); a message ``owed`` (its notifications) is recorded in the outbox in
    the same step too.
    """
    status, started, finished = after.status, after.started, after.finished
    actions: list[Any] = [
        BuildModel.status.set(status),
        BuildModel.updated.set(datetime.now(UTC)),
        BuildModel.revision.add(1),
        BuildModel.started.set(started) if started else BuildModel.started.remove(),
        BuildModel.finished.set(finished) if finished else BuildModel.finished.remove(),
    ]
    item = BuildModel(build.project_id, build.build_id)
    condition = BuildModel.revision == build.revision
    project = _project_key(build)
    try:
        with atomically("The build changed meanwhile.") as transaction:
            transaction.update(item, actions=actions, condition=condition)
            if project is not None:
                transaction.update(project, actions=_last_build_actions(after), condition=_not_newer(build))
            if owed is not None:
                outbox.record(transaction, owed)
        return True
    except Conflict as error:
        codes = cancellation_codes(error)  # the build's update, then the project's, are the last two items
        if project is None or codes is None or codes[-2:] != [None, CONDITION_FAILED]:
            return False  # the build changed meanwhile, or an item was busy: its caller reads it again
    if owed is None:  # the project shows a newer build: the build alone changes
        try:
            item.update(actions=actions, condition=condition)
        except UpdateError as error:
            if is_condition_failure(error):
                return False
            raise
        return True
    try:
        with atomically("The build changed meanwhile.") as transaction:
            transaction.update(item, actions=actions, condition=condition)
            outbox.record(transaction, owed)
    except Conflict:
        return False
    return True


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
