"""The sign-in body and the shape of ``GET /api/caller``."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.shared.validation import MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.users import TeamMember
from chalicelib.wire.fields import Fields


def parse_sign_in(body: Any) -> tuple[str, str, str | None]:
    """``{"email", "password", "accountName"?}`` of ``POST /api/session``."""
    fields = Fields(body)
    return (
        fields.text("email", MAX_EMAIL_LENGTH),
        fields.text("password", MAX_PASSWORD_LENGTH),
        fields.optional_text("accountName") or None,
    )


def caller_json(caller: Caller, who: TeamMember) -> dict[str, Any]:
    """Who a request acts for, in which account, and what its role allows."""
    member = who.member
    return {
        "accountId": caller.account_id,
        "accountName": caller.account_name,
        "userId": member.user_id,
        "email": member.email,
        "fullName": member.full_name,
        "roleId": member.role_id,
        "roleName": who.role_name,
        "isCollaborator": member.is_collaborator,
        "permissions": sorted(caller.permissions),
    }
