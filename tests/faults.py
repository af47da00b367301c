"""Faults as AWS produces them, for tests: a proxy in front of the emulator that throttles DynamoDB and fails S3
writes now and then; and one in front of the API that answers 503 now and then, as a gateway does."""

from __future__ import annotations

import http.client
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

THROTTLED = (
    b'{"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",'
    b' "message": "The level of configured provisioned throughput for the table was exceeded."}'
)
UNAVAILABLE = (503, b'{"message": "Service Unavailable"}', "application/json")  # API Gateway's answer under load
SLOW_DOWN = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class FlakyAws:
    """A proxy to ``endpoint`` that answers every ``every``-th DynamoDB request with a throttling error and every
    ``every``-th S3 write with 503 SlowDown, without forwarding it; ``faults`` counts what it injected."""

    def __init__(self, endpoint: str, every: int = 3) -> None:
        target = urlsplit(endpoint)
        self._target = (target.hostname or "127.0.0.1", target.port or 80)
        self._every = every
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.faults: Counter[str] = Counter()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FlakyAws:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _fault(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes, str] | None:
        """The error to answer instead of forwarding, if this request is one to fail."""
        if headers.get("x-amz-target", "").startswith("DynamoDB_"):
            kind, error = "dynamodb", (400, THROTTLED, "application/x-amz-json-1.0")
        elif method == "PUT" and "x-amz-target" not in headers:
            kind, error = "s3", (503, SLOW_DOWN, "application/xml")
        else:
            return None
        with self._lock:
            self._seen[kind] += 1
            if self._seen[kind] % self._every:
                return None
            self.faults[kind] += 1
        return error

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:  # noqa: C901 (one handler, its small helpers)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # boto3 keeps its connections open

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                    return self.rfile.read(int(self.headers.get("Content-Length") or 0))
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)

            def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in _HOP_BY_HOP:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _forward(self) -> None:
                body = self._body()
                headers = {name.lower(): value for name, value in self.headers.items()}
                fault = proxy._fault(self.command, self.path, headers)
                if fault is not None:
                    status, error, content_type = fault
                    self._answer(status, [("Content-Type", content_type)], error)
                    return
                sent = {name: value for name, value in self.headers.items() if name.lower() not in _HOP_BY_HOP}
                sent["Content-Length"] = str(len(body))
                upstream = http.client.HTTPConnection(*proxy._target, timeout=60)
                try:
                    upstream.request(self.command, self.path, body=body, headers=sent)
                    reply = upstream.getresponse()
                    self._answer(reply.status, reply.getheaders(), reply.read())
                finally:
                    upstream.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward  # noqa: N815

            def log_message(self, format: str, *args: object) -> None:
                """Requests are not logged: test output stays readable."""

        return Handler


class FlakyGateway(FlakyAws):
    """A proxy to the API that answers 503, as API Gateway does under load, to the first request of each call and
    then to every ``every``-th request of it (a call: a method and a path, the query left out).

    Counted per call, not over all requests: a runner calls from several threads at once (its heartbeat, its log's
    flush, its scripts' Build Worker API). With one counter, the request after any answered one is a 503, so a retry
    sent after a backoff during which the heartbeat was answered always gets one, however many retries there are: a
    fault no gateway makes, tied to another thread's call. Counted per call, each call still meets a 503 first and
    its retry is answered, whatever the other threads send meanwhile.
    """

    def _fault(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes, str] | None:
        call = f"{method} {path.split('?')[0]}"
        with self._lock:
            self._seen[call] += 1
            if (self._seen[call] - 1) % self._every:
                return None
            self.faults["api"] += 1
        return UNAVAILABLE
