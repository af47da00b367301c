"""An account: the tenant that owns projects, environments, roles and members."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class Account(FieldsRepr):
    """An account, by id and by its unique name."""

    account_id: int
    name: str
    created: datetime
