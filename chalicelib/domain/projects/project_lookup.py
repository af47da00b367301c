"""Finding a project as the caller may see it: by the slug an URL names, by id, or every one the caller may view.

Apart from domain/projects/projects.py (adding and deleting a project), so that a request that only reads a project
loads none of what adds one (appveyor.yml's defaults, repositories and their credentials, badges: docs/architecture.md,
"What a cold start loads").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol, TypeVar

from chalicelib.core.projects import Project
from chalicelib.domain.team.access import PROJECT_NOT_FOUND, Right, has_right, require_right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.store import projects as store


def visible_projects(caller: Caller) -> list[Project]:
    """The account's projects the caller may view."""
    return [p for p in store.list_projects(caller.account_id) if has_right(caller, p, Right.VIEW)]


def find_project(caller: Caller, account_name: str, slug: str, right: Right = Right.VIEW) -> Project:
    """The project an URL names, if the caller may exercise ``right`` on it."""
    project = None
    if account_name.lower() == caller.account_name.lower():
        project = store.get_project(caller.account_id, slug)
    if project is None:
        raise Unauthorized() if caller.is_visitor else NotFound(PROJECT_NOT_FOUND)
    return as_seen_by(caller, require_right(caller, project, right))


def as_seen_by(caller: Caller, project: Project) -> Project:
    """The project as ``caller`` may hold it: to a visitor without a key, without anything a member alone may
    see (the configuration and its secrets, credentials, webhook, badge id, per-role rights)."""
    if not caller.is_visitor:
        return project
    return replace(
        project,
        configuration={},
        role_rights={},
        webhook_id="",
        webhook_secret=None,
        badge_id=None,
        repository_authentication=None,
        repository_username=None,
        repository_password=None,
        ssh_public_key=None,
        ssh_private_key=None,
        ssh_host_key=None,
    )


def find_project_by_id(caller: Caller, project_id: int, right: Right) -> Project:
    """The project of the caller's account with that id, if the caller may exercise ``right`` on it."""
    project = store.get_project_by_id(caller.account_id, project_id)
    if project is None:
        raise Unauthorized() if caller.is_visitor else NotFound(PROJECT_NOT_FOUND)
    return as_seen_by(caller, require_right(caller, project, right))


class _OfAProject(Protocol):
    @property
    def account_id(self) -> int: ...

    @property
    def project_id(self) -> int: ...


Owned = TypeVar("Owned", bound=_OfAProject)


def with_its_project(caller: Caller, item: Owned | None, right: Right, not_found: str) -> tuple[Owned, Project]:
    """An item of the caller's account (a build, a deployment) and its project, if the caller may exercise ``right``
    on that project; NotFound(``not_found``) for none, one of another account, or one whose project is gone."""
    if item is None or item.account_id != caller.account_id:
        raise NotFound(not_found)
    project = store.get_project_by_id(caller.account_id, item.project_id)
    if project is None:
        raise NotFound(not_found)
    return item, require_right(caller, project, right)
