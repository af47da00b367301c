"""/api/users: the account's own users. GET /api/users/{id} answers for a role id too (the spec's
Get role), since user and role ids come from one sequence."""

from __future__ import annotations

from typing import Any

from chalicelib.api.calls import Call
from chalicelib.domain.team import users
from chalicelib.domain.team.permissions import BUILT_IN_ROLES
from chalicelib.domain.team.roles import list_roles
from chalicelib.wire.fields import path_id
from chalicelib.wire.roles import role_details
from chalicelib.wire.users import parse_new_user, parse_user_change, user_summary, user_with_roles


def list_users(call: Call) -> list[dict[str, Any]]:
    return [user_summary(entry) for entry in users.team(call.caller, collaborators=False)]


def get_user_or_role(call: Call, userId: str) -> dict[str, Any]:
    found = users.user_or_role(call.caller, path_id(userId, "User"))
    if isinstance(found, users.TeamMember):
        built_in = [role for role in list_roles(call.caller) if role.is_system and role.name in BUILT_IN_ROLES]
        return user_with_roles(found, built_in)
    return role_details(found)


def add_user(call: Call) -> None:
    users.add_user(call.caller, parse_new_user(call.json()))


def update_user(call: Call) -> None:
    users.update_user(call.caller, parse_user_change(call.json()))


def delete_user(call: Call, userId: str) -> None:
    users.delete_user(call.caller, path_id(userId, "User"))
