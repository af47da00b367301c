"""Project shapes: the project as every response shows it, with its security descriptor.

The settings' shapes and the bodies that change a project are wire/project_settings.py: a project's read loads
none of what parses a change (docs/architecture.md, "What a cold start loads").
"""

from __future__ import annotations

from typing import Any

from chalicelib.core.projects import Project, RoleRights
from chalicelib.core.repository_names import public_repository_name
from chalicelib.core.roles import Role
from chalicelib.domain.team.access import RIGHT_DESCRIPTIONS, Right
from chalicelib.shapes.time import optional_timestamps, timestamp


def project_json(project: Project, roles: list[Role], builds: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A project as every response shows it; ``builds`` holds the last build in the project list."""
    shape: dict[str, Any] = {
        "projectId": project.project_id,
        "accountId": project.account_id,
        "accountName": project.account_name,
        "builds": builds or [],
        "name": project.name,
        "slug": project.slug,
        "repositoryType": project.repository_type,
        "repositoryScm": project.repository_scm,
        "repositoryName": public_repository_name(project),
        "isPrivate": project.is_private,
        "skipBranchesWithoutServiceYml": project.skip_branches_without_service_yml,
        "securityDescriptor": security_descriptor(project.role_rights, roles),
        "created": timestamp(project.created),
        **optional_timestamps(updated=project.updated),
    }
    if project.repository_branch:
        shape["repositoryBranch"] = project.repository_branch
    if project.repository_authentication == "credentials":  # the password is never shown
        shape["repositoryAuthentication"] = project.repository_authentication
        shape["repositoryUsername"] = project.repository_username
    elif project.repository_authentication == "ssh":  # the public half, to add to the repository's deploy keys
        shape["repositoryAuthentication"] = project.repository_authentication
        shape["sshPublicKey"] = project.ssh_public_key
    return shape


def security_descriptor(role_rights: RoleRights, roles: list[Role]) -> dict[str, Any]:
    """The four rights and one entry per role: all allowed for administrators; for other roles, only
    the rights the project restricts carry ``allowed``."""
    aces = []
    for role in roles:
        is_admin = role.is_system and role.name == "Administrator"
        restricted = role_rights.get(role.role_id, {})
        rights = []
        for right in Right:
            entry: dict[str, Any] = {"name": right.value}
            if is_admin:
                entry["allowed"] = True
            elif right.value in restricted:
                entry["allowed"] = restricted[right.value]
            rights.append(entry)
        aces.append({"roleId": role.role_id, "name": role.name, "isAdmin": is_admin, "accessRights": rights})
    return {
        "accessRightDefinitions": [{"name": right.value, "description": RIGHT_DESCRIPTIONS[right]} for right in Right],
        "roleAces": aces,
    }
