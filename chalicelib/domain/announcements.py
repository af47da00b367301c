"""A finished build's announcement, the notifications queue's message for it: its commit status, its notifications
and its inline deployments, from one read of the build and its project."""

from __future__ import annotations

from chalicelib.domain import commit_statuses, inline_deployments, notifications
from chalicelib.store import builds as build_store
from chalicelib.store import projects as project_store


def announce_build(project_id: int, build_id: int, revision: int, deadline: float) -> None:
    """Queue the post of its result, send its notifications by ``deadline`` (monotonic) and start its inline
    deployments, each once however often the message comes (a redelivery finds them done)."""
    build = build_store.get_build(project_id, build_id, consistent=True)  # the message was sent after its last write
    if build is None:  # deleted since
        return
    project = project_store.get_project_by_id(build.account_id, project_id)
    if project is None:
        return
    commit_statuses.announce_final(project, build)
    notifications.notify_build(project, build, revision, deadline)
    # last: a failure here has the message delivered again, which finds the notifications sent
    inline_deployments.start_inline_deployments(project, build, revision)
