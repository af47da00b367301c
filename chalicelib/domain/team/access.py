"""A project's security descriptor: per-role restrictions of the four project access rights.

A role's permissions say what its members may do in every project; a project can only narrow that
for a role (``allowed: false``). The Administrator role always has every right. Not being allowed to
View a project makes it invisible: 404, as if it did not exist. A visitor without a key may View public projects
and nothing else; to a visitor a project it may not view answers 401, as a request without a key always did.
"""

from __future__ import annotations

from enum import StrEnum

from chalicelib.core.projects import Project
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.permissions import Permission
from chalicelib.errors import Forbidden, NotFound, Unauthorized

PROJECT_NOT_FOUND = "Project not found or access denied."


class Right(StrEnum):
    VIEW = "View"
    RUN_BUILD = "RunBuild"
    UPDATE = "Update"
    DELETE = "Delete"


RIGHT_DESCRIPTIONS: dict[Right, str] = {
    Right.VIEW: "View project settings, builds and deployments",
    Right.RUN_BUILD: "Start, re-run and cancel builds",
    Right.UPDATE: "Update project settings",
    Right.DELETE: "Delete the project and its builds",
}

# The role permission each right also needs (View needs none: every member reads).
_ROLE_PERMISSION: dict[Right, Permission | None] = {
    Right.VIEW: None,
    Right.RUN_BUILD: Permission.RUN_PROJECT_BUILD,
    Right.UPDATE: Permission.UPDATE_PROJECT_SETTINGS,
    Right.DELETE: Permission.MANAGE_PROJECTS,
}


def has_right(caller: Caller, project: Project, right: Right) -> bool:
    """Whether the caller's role grants ``right`` and the project does not take it away."""
    if caller.is_visitor:
        return right == Right.VIEW and not project.is_private
    if caller.is_administrator:
        return True
    permission = _ROLE_PERMISSION[right]
    if permission is not None and not caller.can(permission):
        return False
    return not project_denies(caller, project, right)


def project_denies(caller: Caller, project: Project, right: Right) -> bool:
    """Whether the project's security descriptor takes ``right`` away from the caller's role."""
    if caller.is_visitor:  # who has no role has only what a public project gives everyone
        return not has_right(caller, project, right)
    return not caller.is_administrator and project.role_rights.get(caller.role_id, {}).get(right.value) is False


def require_right(caller: Caller, project: Project, right: Right) -> Project:
    """The project, if the caller may exercise ``right`` on it: 404 when it may not even see it, else 403."""
    if caller.is_visitor and not has_right(caller, project, right):  # a key might: the answer a keyless request had
        raise Unauthorized()
    if not has_right(caller, project, Right.VIEW):
        raise NotFound(PROJECT_NOT_FOUND)
    if not has_right(caller, project, right):
        permission = _ROLE_PERMISSION[right]
        needed = f"the '{permission.value}' permission" if permission else f"the '{right.value}' right"
        raise Forbidden(f"Your role '{caller.role_name}' does not have {needed} on this project.")
    return project
