"""User and collaborator shapes, and the bodies that add and change them."""

from __future__ import annotations

from typing import Any

from chalicelib.core.members import Notifications
from chalicelib.core.roles import Role
from chalicelib.domain.shared.validation import MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH
from chalicelib.domain.team.users import NewUser, TeamMember, UserChange
from chalicelib.shapes.time import optional_timestamps, timestamp
from chalicelib.wire.fields import Fields
from chalicelib.wire.roles import role_summary


def user_summary(entry: TeamMember) -> dict[str, Any]:
    """A user as lists show it: without the deployment notification preferences."""
    member = entry.member
    return {
        "accountId": member.account_id,
        "accountName": member.account_name,
        "isOwner": member.is_owner,
        "isCollaborator": member.is_collaborator,
        "userId": member.user_id,
        "fullName": member.full_name,
        "email": member.email,
        "roleId": member.role_id,
        "roleName": entry.role_name,
        "successfulBuildNotification": member.notifications.successful_build,
        "failedBuildNotification": member.notifications.failed_build,
        "notifyWhenBuildStatusChangedOnly": member.notifications.notify_when_build_status_changed_only,
        "created": timestamp(member.created),
        **optional_timestamps(updated=member.updated),
    }


def user_with_roles(entry: TeamMember, roles: list[Role]) -> dict[str, Any]:
    """GET of one user or collaborator: the full user and the roles it could be given."""
    notifications = entry.member.notifications
    user = {
        **user_summary(entry),
        "successfulDeploymentNotification": notifications.successful_deployment,
        "failedDeploymentNotification": notifications.failed_deployment,
    }
    return {"user": user, "roles": [role_summary(role) for role in roles]}


def parse_new_user(body: Any) -> NewUser:
    fields = Fields(body)
    return NewUser(
        full_name=fields.text("fullName", MAX_NAME_LENGTH),
        email=fields.text("email", MAX_EMAIL_LENGTH),
        role_id=fields.identifier("roleId"),
        generate_password=fields.boolean("generatePassword"),
        password=fields.optional_text("password", MAX_PASSWORD_LENGTH),
        confirm_password=fields.optional_text("confirmPassword", MAX_PASSWORD_LENGTH),
    )


def parse_user_change(body: Any) -> UserChange:
    fields = Fields(body)
    preference_names = (
        "successfulBuildNotification",
        "failedBuildNotification",
        "successfulDeploymentNotification",
        "failedDeploymentNotification",
    )
    preferences = {name: fields.optional_text(name) for name in preference_names}
    changed_only = fields.body.get("notifyWhenBuildStatusChangedOnly")
    notifications = None
    if any(value is not None for value in preferences.values()) or changed_only is not None:
        notifications = Notifications(
            successful_build=preferences["successfulBuildNotification"] or "all",
            failed_build=preferences["failedBuildNotification"] or "all",
            notify_when_build_status_changed_only=fields.boolean("notifyWhenBuildStatusChangedOnly"),
            successful_deployment=preferences["successfulDeploymentNotification"] or "all",
            failed_deployment=preferences["failedDeploymentNotification"] or "all",
        )
    return UserChange(
        user_id=fields.identifier("userId"),
        full_name=fields.text("fullName", MAX_NAME_LENGTH),
        email=fields.text("email", MAX_EMAIL_LENGTH),
        role_id=fields.identifier("roleId"),
        password=fields.optional_text("password", MAX_PASSWORD_LENGTH),
        notifications=notifications,
    )


def parse_collaborator(body: Any) -> tuple[str, int]:
    """The e-mail and role of an added collaborator."""
    fields = Fields(body)
    return fields.text("email", MAX_EMAIL_LENGTH), fields.identifier("roleId")


def parse_collaborator_change(body: Any) -> tuple[int, int]:
    """The user id and new role of a collaborator."""
    fields = Fields(body)
    return fields.identifier("userId"), fields.identifier("roleId")
