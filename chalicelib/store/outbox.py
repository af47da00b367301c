"""The outbox: messages that must follow a write, recorded in that write's transaction and deleted once sent.

A send that follows a DynamoDB write can fail after the write stood; the message would be lost. Recorded with
the write, it stays here until sent, and the sweeper sends again whatever is older than a few minutes. Receivers
are idempotent, so a message sent twice (its delete failed after the send) does no harm.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, replace
from typing import Any

from pynamodb.transactions import TransactWrite

from chalicelib.core.messages import Announce, Message, NotAMessage, announcement, body_of
from chalicelib.store.delivery_models import OutboxModel

OWED = "owed"
# The entries spread over this many partitions ("owed#0" ...), so that the finishing writes of many tenants'
# builds never contend for one; an entry's partition follows from its id.
SHARDS = 8


def _encoded(message: Message) -> dict[str, Any]:
    return {"kind": type(message).__name__, **body_of(message)}


def _decoded(body: Any) -> Message | None:
    """The message an entry records; None for one this version cannot read."""
    if not isinstance(body, dict) or body.get("kind") != Announce.__name__:
        return None
    try:
        return announcement({name: value for name, value in body.items() if name != "kind"})
    except NotAMessage:
        return None


@dataclass(frozen=True)
class Owed:
    """A message to record with a write, under the id it is forgotten by once sent."""

    message_id: str
    message: Message


def owe(message: Message) -> Owed:
    """``message``, owed from now (an announcement names its entry: its receiver forgets it once handled)."""
    message_id = _new_id(time.time())
    if isinstance(message, Announce):
        message = replace(message, owed_id=message_id)
    return Owed(message_id, message)


def _new_id(at: float) -> str:
    return f"{int(at):010d}#{secrets.token_hex(8)}"


def _partition(message_id: str) -> str:
    return f"{OWED}#{int(message_id.rpartition('#')[2], 16) % SHARDS}" if "#" in message_id else OWED


def record(transaction: TransactWrite, owed: Owed) -> None:
    """Add to ``transaction`` the record of the message owed."""
    transaction.save(OutboxModel(_partition(owed.message_id), owed.message_id, body=_encoded(owed.message)))


def forget(message_id: str) -> None:
    """The message was sent."""
    OutboxModel(_partition(message_id), message_id).delete()


def owed_before(cutoff: float, limit: int = 100) -> list[tuple[str, Message | None]]:
    """Messages recorded before ``cutoff`` (epoch seconds) and not sent yet, the oldest of each partition first
    (None: an entry this version cannot read)."""
    found = []
    for shard in range(SHARDS):
        partition = OutboxModel.query(f"{OWED}#{shard}", OutboxModel.message_id < f"{int(cutoff):010d}", limit=limit)
        found += [(model.message_id, _decoded(model.body)) for model in partition]
    return found
