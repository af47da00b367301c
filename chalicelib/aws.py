"""boto3 clients, created on first use and shared; tests and the local stack may inject their own."""

from __future__ import annotations

import random
import threading
from typing import Any

import boto3
import botocore.loaders
import botocore.session
from botocore.config import Config

_clients: dict[str, Any] = {}
_session: boto3.session.Session | None = None
_loader: botocore.loaders.Loader | None = None
_lock = threading.Lock()
_loader_lock = threading.Lock()
_CONFLICT_ATTEMPTS = 6  # a request refused for a transaction on its item is sent at most this often, 20 to 640 ms apart


def client(service: str) -> Any:
    """A boto3 client for ``service``, honouring the standard AWS environment (AWS_ENDPOINT_URL, ...)."""
    global _session
    with _lock:
        if service not in _clients:
            if _session is None:
                _session = boto3.session.Session(botocore_session=botocore_session())
            # under the lock: sessions are not thread-safe. S3 URLs are presigned with Signature Version 4: the
            # legacy form botocore may pick has no scope, and the local emulator accepts only SigV4.
            config = Config(signature_version="s3v4") if service == "s3" else None
            _clients[service] = _session.client(service, config=config)
        return _clients[service]


def botocore_session() -> botocore.session.Session:
    """A new botocore session reading service models through the process's one loader.

    A loader keeps its own parsed copy of every service model and endpoint table it reads, megabytes each, and
    PynamoDB makes a session for each table it uses: with a loader each, a job runner held the DynamoDB model and
    botocore's endpoint tables four times over, some 35 MB.
    """
    global _loader
    session = botocore.session.get_session()
    session.register("needs-retry.dynamodb", retry_transaction_conflict)
    with _loader_lock:
        if _loader is None:
            _loader = session.get_component("data_loader")
        else:
            session.register_component("data_loader", _loader)
    return session


def retry_transaction_conflict(response: Any = None, attempts: int = 1, **_: Any) -> float | None:
    """How long to wait before trying again a DynamoDB request refused because a transaction held its item at that
    moment (TransactionConflictException, which botocore does not retry): builds' and jobs' moves are
    transactions, so a single write to one of their items (a cancel, a settings change) can meet one. The request
    changed nothing; the transaction ends within milliseconds. None for anything else, and after a few tries."""
    parsed = response[1] if isinstance(response, tuple) and len(response) > 1 else None
    code = parsed.get("Error", {}).get("Code") if isinstance(parsed, dict) else None
    if code != "TransactionConflictException" or attempts >= _CONFLICT_ATTEMPTS:
        return None
    return random.uniform(0.01, 0.02) * 2**attempts


def inject(service: str, instance: Any) -> None:
    """Use ``instance`` as the client for ``service`` from now on."""
    with _lock:
        _clients[service] = instance


def forget_clients() -> None:
    """Drop every cached client, so the next use reads the environment again."""
    global _session
    with _lock:
        _clients.clear()
        _session = None
