"""Counting the DynamoDB calls a test's own requests make."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chalicelib import aws
from chalicelib.store import transactions
from chalicelib.store.models import ALL_MODELS


@contextmanager
def dynamodb_calls() -> Iterator[list[str]]:
    """The DynamoDB operations made meanwhile by this thread (the test client's requests run in it; the queue
    pump's workers, finishing an earlier build's notifications, statuses or deployments, do not count), seen
    through botocore's hooks on each model's client, the transactions' (store/transactions.py) and the shared
    one batch reads use (store/batch.py)."""
    seen: list[str] = []
    mine = threading.get_ident()

    def count(model: Any, **_: Any) -> None:
        if threading.get_ident() == mine:
            seen.append(model.name)

    models = (m._get_connection().connection.client for m in ALL_MODELS)
    shared = (transactions._connection().client, aws.client("dynamodb"))
    clients = {id(client): client for client in (*models, *shared)}
    for client in clients.values():
        client.meta.events.register("before-call.dynamodb", count)
    try:
        yield seen
    finally:
        for client in clients.values():
            client.meta.events.unregister("before-call.dynamodb", count)
