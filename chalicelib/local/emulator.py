"""moto's server, in-process, standing in for AWS on a loopback port.

Everything that calls it must sign its requests with the stack's own key. Programs outside this process (job
runners with presigned URLs, a second stack) reach it over HTTP; this process's DynamoDB requests, nearly all the
service makes, are handed to the same app without a socket (a botocore hook), which makes each cost a quarter
less.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import threading
from collections.abc import Callable, Iterable
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.credentials import Credentials
from botocore.handlers import BUILTIN_HANDLERS
from moto.core.botocore_stubber import MockRawResponse
from moto.core.utils import utcnow
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server
from werkzeug.test import EnvironBuilder, run_wsgi_app

from chalicelib.local import moto_patches
from chalicelib.local.persistence import KeptState
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
    app: Callable[..., Iterable[bytes]]  # moto's, with the middlewares around it

    def _server_entry(self) -> None:  # moto's own, serving ``app``
        self._server = make_server(self._ip_address, self._port, self.app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


class _InProcess:
    """botocore's ``before-send`` hook: a DynamoDB request to the emulator is answered by its app (the signature
    check, the lock, moto) called in this thread; other requests (S3's streamed bodies, SQS's long polls) are sent
    as usual.

    AssumeRoleWithWebIdentity is one AWS takes unsigned (the token is the credential), and botocore sends it so;
    the emulator's port refuses it like any unsigned request (moto checks no token, and would lend a build the
    emulator). Sent by this process, the stack's (an S3 deployment's role_arn), it is answered here by moto."""

    def __init__(
        self, app: Callable[..., Iterable[bytes]], endpoint: str, unsigned_app: Callable[..., Iterable[bytes]]
    ) -> None:
        self._app = app
        self._endpoint = endpoint
        self._unsigned_app = unsigned_app

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        target = request.headers.get("X-Amz-Target") or b""
        if not request.url.startswith(self._endpoint + "/"):
            return None
        if _text(target).startswith("DynamoDB_"):
            return self._answer(request, self._app)
        body = request.body if isinstance(request.body, bytes | str) else b""
        if "Authorization" not in request.headers and "Action=AssumeRoleWithWebIdentity" in _text(body).split("&"):
            return self._answer(request, self._unsigned_app)
        return None

    def _answer(self, request: AWSPreparedRequest, app: Callable[..., Iterable[bytes]]) -> AWSResponse:
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        path, _, query = request.url.removeprefix(self._endpoint).partition("?")
        headers = [(name, _text(value)) for name, value in request.headers.items()]
        environ = EnvironBuilder(
            path=path,
            query_string=query,
            method=request.method,
            headers=headers,
            data=body or b"",
            base_url=self._endpoint,
        ).get_environ()
        environ["RAW_URI"] = path + (f"?{query}" if query else "")
        answer, status, answer_headers = run_wsgi_app(app, environ, buffered=True)
        content = b"".join(answer)
        return AWSResponse(request.url, int(status.split()[0]), dict(answer_headers), MockRawResponse(content))  # type: ignore[arg-type]


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Emulator:
    """An embedded AWS emulator; ``start`` points this process's AWS clients at it."""

    def __init__(self, port: int, kept: KeptState | None = None) -> None:
        """``kept``: where its state is restored from and saved to (None: it starts empty and keeps nothing)."""
        # werkzeug logs every request at INFO; the local stack promises to stay quiet.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = _Server(ip_address="127.0.0.1", port=port, verbose=False)
        self.kept = kept
        self.restored = ""
        self.endpoint = ""
        self._secret_key = ""
        self._hook: tuple[str, _InProcess] | None = None

    def start(self) -> str:
        """Start serving and export AWS_ENDPOINT_URL; it answers only requests signed with this process's
        credentials (the environment's, else new random ones)."""
        use_fake_credentials()
        moto_patches.install()
        self._secret_key = os.environ["AWS_SECRET_ACCESS_KEY"]
        moto: Callable[..., Iterable[bytes]] = _OneDynamoDbRequestAtATime(
            DomainDispatcherApplication(create_backend_app)
        )
        if self.kept is not None:
            self.restored = self.kept.restore()
            moto = self.kept.wrap(moto)
        self._server.app = SignedRequestsOnly(
            moto, os.environ["AWS_ACCESS_KEY_ID"], self._secret_key, assumed_role_credentials
        )
        self._server.start()
        if self.kept is not None:
            self.kept.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint
        self._hook = ("before-send", _InProcess(self._server.app, self.endpoint, moto))
        BUILTIN_HANDLERS.append(self._hook)
        return self.endpoint

    @property
    def admin_headers(self) -> dict[str, str]:
        """What a call to the emulator's own /moto-api/ (reset) must carry."""
        return {ADMIN_HEADER: self._secret_key}

    def stop(self) -> None:
        if self._hook in BUILTIN_HANDLERS:
            BUILTIN_HANDLERS.remove(self._hook)
        self._server.stop()
        if self.kept is not None:
            self.kept.stop()  # what changed since its last snapshot


def assumed_role_credentials(access_key: str) -> Credentials | None:
    """The credentials of a role the emulator's STS let the stack assume (AssumeRole, AssumeRoleWithWebIdentity),
    while they last; None for any other key."""
    from moto.sts.models import sts_backends

    now = utcnow()
    for account in list(sts_backends.values()):
        for backend in list(account.values()):
            for role in list(backend.assumed_roles):
                if hmac.compare_digest(role.access_key_id, access_key) and role.expiration > now:
                    return Credentials(access_key, role.secret_access_key, role.session_token)
    return None


def use_fake_credentials() -> None:
    """Credentials for an emulator where none are set: random ones, so that nothing else can sign as this stack."""
    if not (os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY")):
        os.environ["AWS_ACCESS_KEY_ID"] = "CVY" + secrets.token_hex(8).upper()
        os.environ["AWS_SECRET_ACCESS_KEY"] = secrets.token_urlsafe(30)
    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
