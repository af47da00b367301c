"""A deployment environment: a provider and its settings, secrets kept as tokens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class Environment(FieldsRepr):
    account_id: int
    environment_id: int
    name: str
    provider: str
    access_key: str  # a secrets token: the plain key is only ever decrypted to be shown
    access_key_hash: str
    settings: dict[str, Any]  # providerSettings, environmentVariables, notifications; secrets as tokens
    created: datetime
    updated: datetime | None = None
    revision: int = 1
