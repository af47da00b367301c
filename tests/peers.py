"""Real servers on loopback for the deployment providers to deliver to: FTP (pyftpdlib), Azure Blob (Azurite) and a
webhook receiver (http.server). Each is a context manager that starts on a free port and stops on exit."""

from __future__ import annotations

import datetime
import ipaddress
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.ioloop import IOLoop
from pyftpdlib.servers import FTPServer

REPOSITORY = Path(__file__).resolve().parent.parent
AZURITE_BLOB = REPOSITORY / ".azurite" / "node_modules" / ".bin" / "azurite-blob"
AZURITE_ACCOUNT = "devstoreaccount1"
# Azurite's published development key (the same in every installation; not a secret).
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
_LISTENING = re.compile(r"listens on (http://\S+?):(\d+)")

# pyftpdlib logs every session at INFO and, finding no handler of its own, would configure logging globally.
_ftp_log = logging.getLogger("pyftpdlib")
_ftp_log.setLevel(logging.ERROR)
_ftp_log.addHandler(logging.NullHandler())


class _Peer:
    def __enter__(self) -> Any:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Any:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class FtpServer(_Peer):
    """An FTP server on 127.0.0.1 whose one user may read and write everything under ``root``.

    With ``tls=True`` it speaks explicit FTPS (AUTH TLS) with a self-signed certificate for 127.0.0.1, written to
    ``certificate`` (pyftpdlib's TLS needs pyOpenSSL, which the dev requirements install).
    """

    username = "deployer"
    password = "ftp-pa55-word"
    host = "127.0.0.1"

    def __init__(self, root: Path, tls: bool = False) -> None:
        self.root = Path(root)
        self.tls = tls
        self.port = 0
        self.certificate: Path | None = None
        self._server: FTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self.connections = 0  # how many times a client connected, whatever it did then

    def start(self) -> FtpServer:
        """Serve in a daemon thread; returns the server."""
        authorizer = DummyAuthorizer()
        authorizer.add_user(self.username, self.password, str(self.root), perm="elradfmwMT")
        peer = self

        def on_connect(handler: FTPHandler) -> None:
            peer.connections += 1

        handler = type(
            "Handler",
            (self._handler_class(),),
            {
                "authorizer": authorizer,
                "banner": "Conveyor test FTP",
                "auth_failed_timeout": 0.05,
                "on_connect": on_connect,
            },
        )
        # an IOLoop of its own: pyftpdlib's shared one would be closed by whichever server stops first, under the
        # sockets of any other serving in this process (two in one test, or the next test's)
        self._server = FTPServer((self.host, 0), handler, ioloop=IOLoop())
        self.port = self._server.address[1]
        self._thread = threading.Thread(target=self._serve, name="ftp-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, closing every connection."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._folder is not None:
            self._folder.cleanup()

    def _serve(self) -> None:
        assert self._server is not None
        # pyftpdlib's loop is not thread-safe: it runs, and is closed, in this thread only.
        while not self._stopping.is_set():
            self._server.ioloop.loop(0.05, blocking=False)
        self._server.close_all()

    def _handler_class(self) -> type[FTPHandler]:
        if not self.tls:
            return FTPHandler
        from pyftpdlib.handlers import TLS_FTPHandler

        self._folder = tempfile.TemporaryDirectory(prefix="conveyor-ftps-")
        self.certificate = Path(self._folder.name) / "server.pem"
        self.certificate.write_bytes(_self_signed_pem(self.host))
        return type("Handler", (TLS_FTPHandler,), {"certfile": str(self.certificate), "tls_data_required": True})


def _self_signed_pem(host: str) -> bytes:
    """A key and a certificate for ``host`` (an IP address), in one PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return private + certificate.public_bytes(serialization.Encoding.PEM)


def require_azurite() -> None:
    """Skip the calling test where Azurite cannot run; under CI, which has npm, fail instead: a broken install."""
    if AZURITE_BLOB.exists() and shutil.which("node") is not None:
        return
    if shutil.which("npm") is None or shutil.which("node") is None:
        reason = "Azurite needs node and npm, and they are not installed: the Azure Blob tests are skipped"
    else:
        reason = "Azurite is not installed: `make test` installs it into .azurite/ with npm"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


class Azurite(_Peer):
    """Azurite's Blob service on 127.0.0.1 (a free port), storing in a temporary folder."""

    account_name = AZURITE_ACCOUNT
    account_key = AZURITE_KEY

    def __init__(self, start_seconds: float = 30) -> None:
        self.start_seconds = start_seconds
        self.port = 0
        self._process: subprocess.Popen[str] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._output: list[str] = []
        self._closed = threading.Event()

    @property
    def endpoint(self) -> str:
        """The blob service URL of the development account."""
        return f"http://127.0.0.1:{self.port}/{self.account_name}"

    def start(self) -> Azurite:
        """Start Azurite and wait until it listens; RuntimeError with its output if it does not."""
        self._folder = tempfile.TemporaryDirectory(prefix="conveyor-azurite-")
        command = [
            str(AZURITE_BLOB),
            *("--blobHost", "127.0.0.1", "--blobPort", "0", "--location", self._folder.name),
            *("--silent", "--skipApiVersionCheck", "--loose"),
        ]
        self._process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        listening = threading.Event()
        threading.Thread(target=self._read_output, args=(listening,), name="azurite-output", daemon=True).start()
        deadline = time.monotonic() + self.start_seconds
        while not listening.wait(0.05):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("Azurite did not start:\n" + "".join(self._output))
        return self

    def stop(self) -> None:
        """Stop Azurite and remove its storage."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            # Azurite closes its server on SIGTERM but node lingers on a timer for a while: once it said it closed
            # (or after a grace period) it is killed, its storage being temporary anyway.
            deadline = time.monotonic() + 10
            while self._process.poll() is None and not self._closed.is_set() and time.monotonic() < deadline:
                time.sleep(0.05)
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
        if self._folder is not None:
            self._folder.cleanup()

    def _read_output(self, listening: threading.Event) -> None:
        """Reads Azurite's output until it ends (so its pipe never fills), noting the port it listens on."""
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            self._output.append(line)
            found = _LISTENING.search(line)
            if found and not listening.is_set():
                self.port = int(found.group(2))
                listening.set()
            if "successfully closed" in line:
                self._closed.set()


@dataclass(frozen=True)
class ReceivedRequest:
    """One request the receiver got."""

    method: str
    path: str
    headers: dict[str, str]  # by lower-case name
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class WebhookReceiver(_Peer):
    """An HTTP server on 127.0.0.1 recording every request and answering ``status`` with ``answer`` as JSON (both
    settable at any time)."""

    def __init__(self, status: int = 200, answer: Any = None) -> None:
        self.status = status
        self.answer = {"received": True} if answer is None else answer
        self.requests: list[ReceivedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The receiver's base URL (any path is accepted)."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> WebhookReceiver:
        """Serve in a daemon thread; returns the receiver."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="webhook-receiver", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                receiver.requests.append(ReceivedRequest(self.command, self.path, headers, body))
                answer = json.dumps(receiver.answer).encode()
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = do_PUT = do_DELETE = _record  # noqa: N815

            def log_message(self, format: str, *args: object) -> None:
                """Requests are not logged: test output stays readable."""

        return Handler
