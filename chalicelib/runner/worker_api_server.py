"""The Build Worker API's HTTP serving: its listeners, the bounds on their connections and bodies, each request read
and answered.

The runner is outside the job's memory limit: what a job's scripts send it is bounded, and so is how much of it the
runner holds at once.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from chalicelib.runner.worker_api_id_token import is_id_token_request

MAX_BODY_BYTES = 1024 * 1024  # a JSON call: the service takes none bigger (protocol.MAX_JSON_BYTES)
MAX_RESULTS_BYTES = 5 * 1024 * 1024 + 64 * 1024  # a test results file: the service's own limit, with multipart headers
MAX_CONNECTIONS = 64  # open at once, each a thread (a parallel test run keeps one per worker); more get a 503
MAX_BODIES = 2  # requests read and handled at once; the others wait their turn
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

# none on Windows, where no job has a container
_UNIX_STREAM_SERVER: Any = getattr(socketserver, "UnixStreamServer", object)


class _Bounded(socketserver.ThreadingMixIn):
    """A threading server that serves at most ``connections`` (a semaphore) at once, and turns the next away."""

    connections: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.connections.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(1)
                request.sendall(_BUSY)
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()


class UnixServer(_Bounded, _UNIX_STREAM_SERVER):
    """HTTP on a unix socket: the Build Worker API of a job in a container (its first process forwards to it)."""

    def get_request(self) -> tuple[Any, Any]:
        connection, _ = self.socket.accept()
        return connection, ("container", 0)  # http.server logs a client's address as a pair

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-request (the container's forwarder passes the hang-up on) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Ipv4Server(_Bounded, ThreadingHTTPServer):
    """HTTP on 127.0.0.1: the Build Worker API of a job whose scripts run beside the runner."""


class Ipv6Server(Ipv4Server):
    """HTTP on ::1, at the same port: "localhost" may resolve there first."""

    address_family = socket.AF_INET6


class ServedApi(Protocol):
    """What the handler serves (runner/worker_api.py's WorkerApi): each call answers (status, JSON answer)."""

    bodies: threading.BoundedSemaphore

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]: ...

    def upload_test_results(self, path: str, data: bytes, content_type: str) -> tuple[int, Any]: ...

    def id_token_request(self, path: str, authorization: str) -> tuple[int, Any]: ...


def handler_for(api: ServedApi) -> type[BaseHTTPRequestHandler]:
    """The request handler of ``api``'s servers: each request's body bounded, read, and answered as JSON."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60  # a client that stops sending mid-request loses its connection, not a thread for ever

        def do_POST(self) -> None:  # noqa: N802 (http.server's names)
            self._serve("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._serve("PUT")

        def do_GET(self) -> None:  # noqa: N802
            self._serve("GET")

        def _serve(self, method: str) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            results = method == "POST" and _is_test_results(self.path)
            limit = MAX_RESULTS_BYTES if results else MAX_BODY_BYTES
            if not 0 <= length <= limit:
                # a results file that big is refused as the service refuses it, with a 400
                self._answer(400 if results else 413, {"message": f"A request may carry at most {limit:,} bytes."})
                self.close_connection = True
                return
            with api.bodies:
                raw = self.rfile.read(length) if length else b""
                if len(raw) < length:  # the client hung up mid-body: nothing to act on
                    self.close_connection = True
                    return
                self._serve_body(method, raw, results)

        def _serve_body(self, method: str, raw: bytes, results: bool) -> None:
            if method == "GET" and is_id_token_request(self.path):
                self._answer(*api.id_token_request(self.path, self.headers.get("Authorization") or ""))
                return
            if results:
                self._answer(*api.upload_test_results(self.path, raw, self.headers.get("Content-Type") or ""))
                return
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError:
                self._answer(400, {"message": "The body is not JSON."})
                return
            self._answer(*api.handle(method, self.path, body))

        def _answer(self, status: int, payload: Any) -> None:
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status if data or status != 200 else 204)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            return

    return Handler


def _is_test_results(path: str) -> bool:
    parts = [part for part in path.split("?")[0].split("/") if part]
    return len(parts) >= 3 and parts[1].lower() == "api" and parts[2].lower() == "testresults"
