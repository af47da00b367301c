"""What running jobs report through the Build Worker API: messages, compilation messages and tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

MESSAGE = "message"
COMPILATION = "compilation"
TEST = "test"


@dataclass(frozen=True)
class Report:
    kind: str  # MESSAGE, COMPILATION or TEST
    body: dict[str, Any]
    created: datetime  # a test's: when it was first reported
