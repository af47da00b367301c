"""Counting the DynamoDB calls a test's own requests make, and the S3 calls made on a job's objects."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chalicelib import aws
from chalicelib.store import transactions
from chalicelib.store.schema import ALL_MODELS


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


@contextmanager
def s3_calls(under: str) -> Iterator[list[str]]:
    """The S3 operations made meanwhile, by any thread (the API served on loopback answers runners in its own), on
    objects under the prefix ``under`` (a job's, say): each as ``Operation key``, the first key (or the listing's
    prefix) it named, less ``under``. Seen through botocore's hooks on the S3 client the service shares."""
    seen: list[str] = []

    def count(params: dict[str, Any], model: Any, **_: Any) -> None:
        named = [params.get("Key"), params.get("Prefix")]
        named += [entry.get("Key") for entry in (params.get("Delete") or {}).get("Objects", [])]
        ours = [key for key in named if isinstance(key, str) and key.startswith(under)]
        if ours:
            seen.append(f"{model.name} {ours[0][len(under) :]}")

    client = aws.client("s3")
    client.meta.events.register("before-parameter-build.s3", count)
    try:
        yield seen
    finally:
        client.meta.events.unregister("before-parameter-build.s3", count)
