"""A member of an account (a user, or a collaborator from another account) and what they are told."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class Notifications(FieldsRepr):
    """The e-mails a member asks for, of builds and deployments that succeed or fail: "all", "mine" or "none"."""

    successful_build: str = "all"
    failed_build: str = "all"
    notify_when_build_status_changed_only: bool = False
    successful_deployment: str = "all"
    failed_deployment: str = "all"


@dataclass(frozen=True, repr=False)
class Member(FieldsRepr):
    """A user as a member of one account, with the role they hold there."""

    account_id: int
    account_name: str
    user_id: int
    email: str
    full_name: str
    role_id: int
    is_owner: bool
    is_collaborator: bool
    created: datetime
    notifications: Notifications = field(default_factory=Notifications)
    updated: datetime | None = None
    revision: int = 1
    password_stamp: str | None = (
        None  # changes whenever the password does (a dashboard session keeps the one it began with)
    )
