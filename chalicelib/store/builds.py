"""Builds: read by project, branch, version and id, and their version, flags and messages changed by conditional
writes (a new build with its jobs and number, and its state as its jobs move, are store/build_states.py's)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from pynamodb.exceptions import UpdateError

from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.store.batch import get_items
from chalicelib.store.models import BuildModel, ProjectModel
from chalicelib.store.projects import project_from_model
from chalicelib.store.transactions import (
    atomically,
    claim,
    is_condition_failure,
    release,
)


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
