"""What running jobs report through the Build Worker API: messages, compilation messages and tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.core.reprs import FieldsRepr

MESSAGE = "message"
COMPILATION = "compilation"
TEST = "test"
SENT_FROM_OUTSIDE = "sentFromOutside"  # a stored test's mark: a key sent it (a results file), not the build's runner


@dataclass(frozen=True, repr=False)
class Report(FieldsRepr):
    """A message, compilation message or test a running job reported."""

    kind: str  # MESSAGE, COMPILATION or TEST
    body: dict[str, Any]
    created: datetime  # a test's: when it was first reported
