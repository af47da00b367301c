"""moto's server, in-process, standing in for AWS on a loopback port."""

from __future__ import annotations

import logging
import os

from moto.server import ThreadedMotoServer

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "conveyor-local",
    "AWS_SECRET_ACCESS_KEY": "conveyor-local",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class Emulator:
    """An embedded AWS emulator; ``start`` points this process's AWS clients at it."""

    def __init__(self, port: int) -> None:
        # werkzeug logs every request at INFO; the local stack promises to stay quiet.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
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
