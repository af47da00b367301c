"""moto's server, in-process, standing in for AWS on a loopback port."""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

from chalicelib.local.signatures import ADMIN_HEADER, SignedRequestsOnly

REGION = "us-east-1"


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
    credentials: tuple[str, str] = ("", "")

    def _server_entry(self) -> None:  # moto's own, with the middlewares around its app
        app = _OneDynamoDbRequestAtATime(DomainDispatcherApplication(create_backend_app))
        app = SignedRequestsOnly(app, *self.credentials)  # type: ignore[assignment]
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
        """Start serving and export AWS_ENDPOINT_URL; it answers only requests signed with this process's
        credentials (the environment's, else new random ones)."""
        use_fake_credentials()
        self._server.credentials = (os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint
        return self.endpoint

    @property
    def admin_headers(self) -> dict[str, str]:
        """What a call to the emulator's own /moto-api/ (reset) must carry."""
        return {ADMIN_HEADER: self._server.credentials[1]}

    def stop(self) -> None:
        self._server.stop()


def use_fake_credentials() -> None:
    """Credentials for an emulator where none are set: random ones, so that nothing else can sign as this stack."""
    if not (os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY")):
        os.environ["AWS_ACCESS_KEY_ID"] = "CVY" + secrets.token_hex(8).upper()
        os.environ["AWS_SECRET_ACCESS_KEY"] = secrets.token_urlsafe(30)
    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
