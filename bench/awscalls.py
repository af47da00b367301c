"""Counting the AWS calls a piece of code makes, through botocore's event hooks on every client it creates.

A call made while a thread is ``labelled`` (an API request it serves, say) is also counted under that label, so
the calls of concurrent requests can be told apart.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import botocore.session


@dataclass
class Calls:
    """The calls seen while counting: by ``service.Operation``, with the bytes each service answered."""

    operations: Counter[str] = field(default_factory=Counter)
    response_bytes: Counter[str] = field(default_factory=Counter)
    trace: list[str] = field(default_factory=list)  # each call, with the table or bucket key it named
    labels: dict[str, Calls] = field(default_factory=dict)  # the calls made under each label ...
    labelled: Counter[str] = field(default_factory=Counter)  # ... and how many times each label was entered

    def of(self, service: str) -> int:
        return sum(count for name, count in self.operations.items() if name.startswith(f"{service}."))

    def describe(self, service: str) -> str:
        """``3 (GetItem 2, Query 1)``."""
        names = sorted(
            (name.split(".", 1)[1], count) for name, count in self.operations.items() if name.startswith(f"{service}.")
        )
        return f"{self.of(service)}" + (f" ({', '.join(f'{op} {n}' for op, n in names)})" if names else "")

    def everything(self) -> str:
        """``dynamodb 3 (GetItem 2, Query 1); s3 1 (PutObject 1)``, every service called; ``none`` when none was."""
        services = sorted({name.split(".", 1)[0] for name in self.operations})
        return "; ".join(f"{service} {self.describe(service)}" for service in services) or "none"

    def unlabelled(self) -> Calls:
        """The calls made outside every label."""
        rest = Calls(Counter(self.operations))
        for calls in self.labels.values():
            rest.operations.subtract(calls.operations)
        rest.operations = +rest.operations  # drop the zeros
        return rest


class CallCounter:
    """Installs itself on botocore: every client created afterwards reports its calls to the active count."""

    def __init__(self) -> None:
        self._active: Calls | None = None
        self._lock = threading.Lock()
        self._original: Any = None
        self._thread = threading.local()  # .label: what this thread's calls are counted under, besides the total

    def install(self) -> CallCounter:
        original = self._original = botocore.session.Session.create_client
        counter = self

        def create_client(session: botocore.session.Session, *args: Any, **kwargs: Any) -> Any:
            client = original(session, *args, **kwargs)
            client.meta.events.register("before-call", counter._before_call)
            client.meta.events.register("after-call", counter._after_call)
            return client

        botocore.session.Session.create_client = create_client  # type: ignore[method-assign]
        return self

    def uninstall(self) -> None:
        botocore.session.Session.create_client = self._original  # type: ignore[method-assign]

    @contextmanager
    def counting(self) -> Iterator[Calls]:
        calls = Calls()
        self._active = calls
        try:
            yield calls
        finally:
            self._active = None

    @contextmanager
    def labelled(self, label: str) -> Iterator[None]:
        """Count this thread's calls under ``label`` too, until the block ends."""
        before = getattr(self._thread, "label", None)
        self._thread.label = label
        with self._lock:
            if self._active is not None:
                self._active.labelled[label] += 1
        try:
            yield
        finally:
            self._thread.label = before

    def _before_call(self, model: Any, params: Any = None, **_: Any) -> None:
        with self._lock:
            if self._active is not None:
                name = f"{model.service_model.service_name}.{model.name}"
                self._active.operations[name] += 1
                self._active.trace.append(f"{name} {_target(params)}")
                label = getattr(self._thread, "label", None)
                if label is not None:
                    self._active.labels.setdefault(label, Calls()).operations[name] += 1

    def _after_call(self, model: Any, http_response: Any = None, **_: Any) -> None:
        with self._lock:
            # a streamed body (S3 GetObject) is left for its reader: reading it here would empty it
            if self._active is not None and http_response is not None and not model.has_streaming_output:
                self._active.response_bytes[model.service_model.service_name] += len(http_response.content or b"")


def _target(params: Any) -> str:
    """The table (and index) a DynamoDB call names in its JSON body, else the request's path (S3's key)."""
    if not isinstance(params, dict):
        return ""
    body = params.get("body")
    try:
        body = json.loads(body) if isinstance(body, bytes | str) and body else body
    except ValueError:
        body = None
    if isinstance(body, dict) and "TableName" in body:
        return body["TableName"] + (f"/{body['IndexName']}" if "IndexName" in body else "")
    if isinstance(body, dict) and "RequestItems" in body:  # BatchGetItem, BatchWriteItem
        return ", ".join(body["RequestItems"])
    return str(params.get("url_path", ""))
