"""A role: a named set of permissions that members hold."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class Role(FieldsRepr):
    """A role of an account: its name and the permissions its members hold."""

    account_id: int
    role_id: int
    name: str
    is_system: bool
    allowed: frozenset[str]
    created: datetime
    updated: datetime | None = None
    revision: int = 1
