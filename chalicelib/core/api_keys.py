"""What an API key stands for: a user, on one account or (a user-level key) on each of theirs."""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class ApiKey(FieldsRepr):
    """The user a key acts for, and the account it is limited to (None for a user-level key)."""

    user_id: int
    account_id: int | None  # None: a user-level (v2) key, valid on every account of the user
    account_name: str | None
