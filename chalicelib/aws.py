"""boto3 clients, created on first use and shared; tests and the local stack may inject their own."""

from __future__ import annotations

import threading
from typing import Any

import boto3

_clients: dict[str, Any] = {}
_lock = threading.Lock()


def client(service: str) -> Any:
    """A boto3 client for ``service``, honouring the standard AWS environment (AWS_ENDPOINT_URL, ...)."""
    with _lock:
        if service not in _clients:
            _clients[service] = boto3.session.Session().client(service)
        return _clients[service]


def inject(service: str, instance: Any) -> None:
    """Use ``instance`` as the client for ``service`` from now on."""
    with _lock:
        _clients[service] = instance


def forget_clients() -> None:
    """Drop every cached client, so the next use reads the environment again."""
    with _lock:
        _clients.clear()
