"""moto's server, in-process, standing in for AWS on a loopback port."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "conveyor-local",
    "AWS_SECRET_ACCESS_KEY": "conveyor-local",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class _OneDynamoDbRequestAtATime:
    """WSGI middleware: DynamoDB requests are served one at a time.

    DynamoDB applies each conditional write atomically, and Conveyor's counters, claims and revision checks rely
    on it. moto checks a condition and then writes without a lock, so two writers racing on one item could both
    succeed; serving DynamoDB requests in turn restores the guarantee. Other services stay concurrent.
    """

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
            return self._app(environ, start_response)
        with self._lock:
            return list(self._app(environ, start_response))


class _Server(ThreadedMotoServer):
    def _server_entry(self) -> None:  # moto's own, with the middleware around its app
        app = _OneDynamoDbRequestAtATime(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


class Emulator:
    """An embedded AWS emulator; ``start`` points this process's AWS clients at it."""

    def __init__(self, port: int) -> None:
        # werkzeug logs every request at INFO; the local stack promises to stay quiet.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = _Server(ip_address="127.0.0.1", port=port, verbose=False)
        self.endpoint = ""

    def start(self) -> str:
        """Start serving and export AWS_ENDPOINT_URL (and fake credentials where none are set)."""
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint
        use_fake_credentials()
        return self.endpoint

    def stop(self) -> None:
        self._server.stop()


def use_fake_credentials() -> None:
    """An emulator accepts any credentials, but boto3 refuses to sign without some."""
    for name, value in FAKE_CREDENTIALS.items():
        os.environ.setdefault(name, value)
