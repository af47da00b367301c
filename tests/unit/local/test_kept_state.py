"""The local stack's snapshot gate (chalicelib/local/persistence.py): a snapshot is taken with no request in the
emulator, but a long request (an artifact's upload) does not hold every other one back while it waits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from chalicelib.local.persistence import Gate

DYNAMODB = "AWS4-HMAC-SHA256 Credential=KEY/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x"
S3 = DYNAMODB.replace("/dynamodb/", "/s3/")
DEADLOCK_GUARD_SECONDS = 30  # only a blocked request ever waits this long


class App:
    """A WSGI app whose ``/slow`` requests wait for ``release``."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.slow_entered = threading.Event()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ["PATH_INFO"] == "/slow":
            self.slow_entered.set()
            self.release.wait(DEADLOCK_GUARD_SECONDS)
        start_response("200 OK", [])
        return [b"ok"]


def request(gate: Gate, path: str, authorization: str, method: str = "POST", target: str = "") -> bytes:
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method, "HTTP_AUTHORIZATION": authorization}
    if target:
        environ["HTTP_X_AMZ_TARGET"] = target
    return b"".join(gate(environ, lambda *_: None))


def in_thread(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def test_a_snapshot_waiting_on_a_long_upload_lets_other_requests_through() -> None:
    app = App()
    gate = Gate(app)
    upload = in_thread(lambda: request(gate, "/slow", S3, "PUT"))
    assert app.slow_entered.wait(DEADLOCK_GUARD_SECONDS)
    snapshots: list[str] = []

    def take() -> None:
        with gate.closed():
            snapshots.append("taken")

    snapshot = in_thread(take)

    read = in_thread(lambda: request(gate, "/", DYNAMODB, target="DynamoDB_20120810.GetItem"))
    read.join(DEADLOCK_GUARD_SECONDS)

    assert not read.is_alive()  # the read went through while the upload was still in flight
    assert snapshots == []  # and the snapshot still waits for it
    app.release.set()
    upload.join(DEADLOCK_GUARD_SECONDS)
    snapshot.join(DEADLOCK_GUARD_SECONDS)
    assert snapshots == ["taken"]


def test_a_write_marks_the_state_changed_and_a_read_or_a_queue_request_does_not() -> None:
    gate = Gate(App())

    request(gate, "/", DYNAMODB, target="DynamoDB_20120810.Query")
    request(gate, "/", DYNAMODB.replace("/dynamodb/", "/sqs/"), target="AmazonSQS.SendMessage")
    request(gate, "/bucket/key", S3, "GET")
    assert not gate.dirty

    request(gate, "/", DYNAMODB, target="DynamoDB_20120810.TransactWriteItems")
    assert gate.dirty
