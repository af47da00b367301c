"""A finished build's announcement, the notifications queue's message for it: its commit status, its notifications
and its inline deployments, from one read of the build and its project."""

from __future__ import annotations

from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.domain.deployments import inline_deployments
from chalicelib.domain.forges import commit_statuses
from chalicelib.domain.notifications import notifications
from chalicelib.store import builds as build_store
from chalicelib.store import projects as project_store


def announce_build(
    project_id: int, build_id: int, revision: int, deadline: float, project_key: tuple[int, str] | None = None
) -> None:
    """Queue the post of its result, send its notifications by ``deadline`` (monotonic) and start its inline
    deployments, each once however often the message comes (a redelivery finds them done). ``project_key``: the
    project's account id and slug, when the message names them (build and project are then read at once)."""
    found = _build_and_project(project_id, build_id, project_key)
    if found is None:  # deleted since
        return
    build, project = found
    commit_statuses.announce_final(project, build)
    notifications.notify_build(project, build, revision, deadline)
    # last: a failure here has the message delivered again, which finds the notifications sent
    inline_deployments.start_inline_deployments(project, build, revision)


def _build_and_project(
    project_id: int, build_id: int, project_key: tuple[int, str] | None
) -> tuple[Build, Project] | None:
    """The build, read consistently (the message was sent after its last write), and its project."""
    if project_key is not None:
        return build_store.get_build_and_project(project_key[0], project_id, build_id, project_key[1])
    build = build_store.get_build(project_id, build_id, consistent=True)
    project = None if build is None else project_store.get_project_by_id(build.account_id, project_id)
    return None if build is None or project is None else (build, project)
