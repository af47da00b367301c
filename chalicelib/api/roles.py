"""/api/roles: list, add, update, delete roles (role details are also served at /api/users/{id})."""

from __future__ import annotations

from typing import Any

from chalicelib.api.calls import Call
from chalicelib.domain.team import roles
from chalicelib.domain.team.roles import MAX_ROLE_NAME_LENGTH
from chalicelib.wire.fields import Fields, path_id
from chalicelib.wire.roles import parse_role_update, role_details, role_summary


def list_roles(call: Call) -> list[dict[str, Any]]:
    return [role_summary(role) for role in roles.list_roles(call.caller)]


def get_role(call: Call, roleId: str) -> dict[str, Any]:
    return role_details(roles.get_role(call.caller, path_id(roleId, "Role")))


def add_role(call: Call) -> dict[str, Any]:
    return role_details(roles.add_role(call.caller, Fields(call.json()).text("name", MAX_ROLE_NAME_LENGTH)))


def update_role(call: Call) -> dict[str, Any]:
    role_id, name, allowed = parse_role_update(call.json())
    return role_details(roles.update_role(call.caller, role_id, name, allowed))


def delete_role(call: Call, roleId: str) -> None:
    roles.delete_role(call.caller, path_id(roleId, "Role"))
