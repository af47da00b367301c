"""A queue's messages as an SQS event holds them: each record's body read, one that is no message logged and left."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from chalice.app import SQSEvent

Message = TypeVar("Message")


def read_messages(event: SQSEvent, parse: Callable[[Any], Message], log: logging.Logger, refused: str) -> list[Message]:
    """The messages ``parse`` reads from the event's JSON bodies, in order; a body that is not JSON, or that
    ``parse`` refuses (ValueError: NotAMessage), is logged on ``log`` as ``refused`` with its start, and skipped."""
    found = []
    for record in event:
        try:
            found.append(parse(json.loads(record.body)))
        except ValueError:  # NotAMessage, or not JSON
            log.error("%s: %.200s", refused, record.body)
    return found
