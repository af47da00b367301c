"""Role shapes: the list form, the details form with permission groups (and the groups), and the update body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.core.roles import Role
from chalicelib.domain.shared.validation import invalid
from chalicelib.domain.team.permissions import Permission
from chalicelib.domain.team.roles import MAX_ROLE_NAME_LENGTH
from chalicelib.shapes.time import optional_timestamps, timestamp
from chalicelib.wire.fields import Fields


@dataclass(frozen=True)
class PermissionGroup:
    """A group of permissions as role details show it, each permission with its description."""

    name: str
    permissions: tuple[tuple[Permission, str], ...]  # (permission, description)


GROUPS: tuple[PermissionGroup, ...] = (
    PermissionGroup(
        "Projects",
        (
            (Permission.MANAGE_PROJECTS, "Add and delete projects"),
            (Permission.UPDATE_PROJECT_SETTINGS, "Update project settings"),
            (Permission.RUN_PROJECT_BUILD, "Run, re-run and cancel project builds"),
            (Permission.DELETE_PROJECT_BUILDS, "Delete project builds"),
        ),
    ),
    PermissionGroup(
        "Environments",
        (
            (Permission.MANAGE_ENVIRONMENTS, "Add and delete deployment environments"),
            (Permission.UPDATE_ENVIRONMENT_SETTINGS, "Update deployment environment settings"),
            (Permission.DEPLOY_TO_ENVIRONMENT, "Deploy builds to environments"),
        ),
    ),
    PermissionGroup("Account", ((Permission.UPDATE_ACCOUNT_DETAILS, "Update account details"),)),
    PermissionGroup(
        "Users",
        (
            (Permission.ADD_USER, "Add users and collaborators"),
            (Permission.UPDATE_USER_DETAILS, "Update users and collaborators"),
            (Permission.DELETE_USER, "Delete users and collaborators"),
        ),
    ),
    PermissionGroup(
        "Roles",
        (
            (Permission.ADD_ROLE, "Add roles"),
            (Permission.UPDATE_ROLE_DETAILS, "Update roles"),
            (Permission.DELETE_ROLE, "Delete roles"),
        ),
    ),
    PermissionGroup("User", ((Permission.CONFIGURE_API_KEYS, "Generate API keys"),)),
)


def role_summary(role: Role) -> dict[str, Any]:
    """A role as role lists show it: no groups."""
    return {
        "roleId": role.role_id,
        "name": role.name,
        "isSystem": role.is_system,
        "created": timestamp(role.created),
        **optional_timestamps(updated=role.updated),
    }


def role_details(role: Role) -> dict[str, Any]:
    """A role with every permission group, each permission's description and whether it is allowed."""
    groups = [
        {
            "name": group.name,
            "permissions": [
                {"name": permission.value, "description": description, "allowed": permission.value in role.allowed}
                for permission, description in group.permissions
            ],
        }
        for group in GROUPS
    ]
    return {**role_summary(role), "groups": groups}


def parse_role_update(body: Any) -> tuple[int, str, set[Permission]]:
    """The role id, name and allowed permissions of a full-role PUT; unknown names are a 400."""
    fields = Fields(body)
    role_id = fields.identifier("roleId")
    name = fields.text("name", MAX_ROLE_NAME_LENGTH)
    known = {group.name: {permission.value for permission, _ in group.permissions} for group in GROUPS}
    allowed: set[Permission] = set()
    for group_body in fields.array("groups"):
        group = Fields(group_body, "Each of groups")
        group_name = group.text("name")
        if group_name not in known:
            raise invalid("groups", f"Unknown permission group '{group_name}'.")
        for permission_body in group.array("permissions"):
            permission = Fields(permission_body, "Each of permissions")
            permission_name = permission.text("name")
            if permission_name not in known[group_name]:
                raise invalid("groups", f"Unknown permission '{permission_name}' in group '{group_name}'.")
            if permission.boolean("allowed"):
                allowed.add(Permission(permission_name))
    return role_id, name, allowed
