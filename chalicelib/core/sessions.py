"""A dashboard session, begun by signing in with e-mail and password."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class Session(FieldsRepr):
    """A signed-in dashboard session of a user in one account, until it expires."""

    account_id: int
    account_name: str
    user_id: int
    created: datetime
    expires: datetime
    password_stamp: str | None = None  # the user's password it was begun with: a new password ends it
