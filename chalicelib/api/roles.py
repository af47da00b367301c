"""/api/roles: list, add, update, delete roles (role details are also served at /api/users/{id})."""

from __future__ import annotations

from typing import Any

from chalicelib.api.http import ApiBlueprint, Call
from chalicelib.domain import roles
from chalicelib.domain.permissions import Permission
from chalicelib.domain.roles import MAX_ROLE_NAME_LENGTH
from chalicelib.wire.fields import Fields, path_id
from chalicelib.wire.roles import parse_role_update, role_details, role_summary

api = ApiBlueprint(__name__)


@api.route("/roles")
def list_roles(call: Call) -> list[dict[str, Any]]:
    return [role_summary(role) for role in roles.list_roles(call.caller)]


@api.route("/roles/{roleId}")
def get_role(call: Call, roleId: str) -> dict[str, Any]:
    return role_details(roles.get_role(call.caller, path_id(roleId, "Role")))


@api.route("/roles", "POST", Permission.ADD_ROLE)
def add_role(call: Call) -> dict[str, Any]:
    return role_details(roles.add_role(call.caller, Fields(call.json()).text("name", MAX_ROLE_NAME_LENGTH)))


@api.route("/roles", "PUT", Permission.UPDATE_ROLE_DETAILS)
def update_role(call: Call) -> dict[str, Any]:
    role_id, name, allowed = parse_role_update(call.json())
    return role_details(roles.update_role(call.caller, role_id, name, allowed))


@api.route("/roles/{roleId}", "DELETE", Permission.DELETE_ROLE)
def delete_role(call: Call, roleId: str) -> None:
    roles.delete_role(call.caller, path_id(roleId, "Role"))
