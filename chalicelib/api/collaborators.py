"""/api/collaborators: users of other accounts given a role in this one."""

from __future__ import annotations

from typing import Any

from chalicelib.api.calls import Call
from chalicelib.domain.team import collaborators, users
from chalicelib.domain.team.roles import list_roles
from chalicelib.wire.fields import path_id
from chalicelib.wire.users import parse_collaborator, parse_collaborator_change, user_summary, user_with_roles


def list_collaborators(call: Call) -> list[dict[str, Any]]:
    return [user_summary(entry) for entry in users.team(call.caller, collaborators=True)]


def get_collaborator(call: Call, userId: str) -> dict[str, Any]:
    entry = users.team_member(call.caller, path_id(userId, "Collaborator"), collaborator=True)
    return user_with_roles(entry, list_roles(call.caller))


def add_collaborator(call: Call) -> None:
    email, role_id = parse_collaborator(call.json())
    collaborators.add_collaborator(call.caller, email, role_id)


def update_collaborator(call: Call) -> None:
    user_id, role_id = parse_collaborator_change(call.json())
    collaborators.update_collaborator(call.caller, user_id, role_id)


def delete_collaborator(call: Call, userId: str) -> None:
    collaborators.delete_collaborator(call.caller, path_id(userId, "Collaborator"))
