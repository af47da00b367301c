"""An account: the tenant that owns projects, environments, roles and members."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Account:
    account_id: int
    name: str
    created: datetime
