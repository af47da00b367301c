"""The local emulator answers only requests signed with the stack's own secret key.

moto accepts any credentials, and everything on this machine can reach its loopback port, a build's scripts
included: unchecked, a build could read every table, decrypt every secret and overwrite any object. So the
embedded emulator checks each request's AWS Signature Version 4 (in its Authorization header, or, for S3's
presigned URLs, in its query string) with botocore's own signer and the secret key only the stack holds, and
answers 403 otherwise; its /moto-api/ (reset, state) is refused to everybody but the stack.

A presigned URL is held to what it was signed for, as S3 holds it: an ``x-amz-*`` header it was not signed with
(``x-amz-copy-source`` would copy another tenant's object into an artifact) is refused, and so is a body of another
size than its signed Content-Length (sent chunked, a body is not bounded by that header). S3's refusals are S3's
XML error; others stay JSON.

So an S3 deployment to the local emulator works with the stack's own keys only (or none: the default).
"""

from __future__ import annotations

import hmac
import io
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, quote
from xml.sax.saxutils import escape

from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

_HEADER = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/,]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
    r"\s*SignedHeaders=(?P<headers>[^,]+),\s*Signature=(?P<signature>[0-9a-f]{64})$"
)
_MAX_SKEW_SECONDS = 15 * 60
_IN_MEMORY_BODY = 8 * 1024 * 1024  # a chunked upload's body is counted in memory up to this, then in a file
ADMIN_HEADER = "X-Conveyor-Emulator-Key"
_S3_ERROR = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>{}</Message></Error>'
NOT_SIGNED = "Refused: the request is not signed with the local stack's credentials."


class SignedRequestsOnly:
    """WSGI middleware: requests not signed with ``credentials`` get a 403 and never reach moto."""

    def __init__(
        self,
        app: Callable[..., Iterable[bytes]],
        access_key: str,
        secret_key: str,
        temporary: Callable[[str], Credentials | None] | None = None,
    ) -> None:
        self._app = app
        self._access_key = access_key
        self._credentials = Credentials(access_key, secret_key)
        # temporary credentials the emulator's own STS issued (an S3 deployment's role_arn, assumed with a job's ID
        # token): only the stack can ask STS for them, as every other request, and it holds them as AWS would
        self._temporary = temporary

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith("/moto-api"):
            sent = environ.get("HTTP_" + ADMIN_HEADER.upper().replace("-", "_"), "")
            refusal = None if hmac.compare_digest(sent, self._credentials.secret_key) else NOT_SIGNED
        else:
            refusal = self._refusal(environ)
        if refusal is None:
            return self._app(environ, start_response)
        if _is_s3(environ):
            start_response("403 Forbidden", [("Content-Type", "application/xml")])
            return [_S3_ERROR.format(escape(refusal)).encode()]
        start_response("403 Forbidden", [("Content-Type", "application/json")])
        return [json.dumps({"message": refusal}).encode()]

    def _refusal(self, environ: dict[str, Any]) -> str | None:
        """Why the request is refused; None when it is signed with the stack's credentials (and a presigned one is
        sent as it was signed)."""
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        if any(name == "X-Amz-Signature" for name, _ in query):
            return NOT_SIGNED if "HTTP_AUTHORIZATION" in environ else self._presigned(environ, query)
        match = _HEADER.match(environ.get("HTTP_AUTHORIZATION", ""))
        if match is None:
            return NOT_SIGNED
        credentials = self._credentials_of(match["key"])
        if credentials is None:
            return NOT_SIGNED
        headers = _headers(environ, match["headers"].split(";"))
        if credentials.token is not None and not hmac.compare_digest(
            headers.get("X-Amz-Security-Token", ""), credentials.token
        ):
            return NOT_SIGNED
        if not _fresh(headers.get("X-Amz-Date", ""), _MAX_SKEW_SECONDS):
            return NOT_SIGNED
        body = b""
        if match["service"] != "s3" or "X-Amz-Content-SHA256" not in headers:
            body = _read_body(environ)
        auth_type = S3SigV4Auth if match["service"] == "s3" else SigV4Auth
        auth = auth_type(credentials, match["service"], match["region"])
        raw_query = environ.get("QUERY_STRING", "")
        request = AWSRequest(method=environ["REQUEST_METHOD"], url=_url(environ, raw_query), data=body, headers=headers)
        request.context["timestamp"] = headers.get("X-Amz-Date", "")
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        return None if hmac.compare_digest(expected, match["signature"]) else NOT_SIGNED

    def _credentials_of(self, access_key: str) -> Credentials | None:
        """The credentials a request signed with ``access_key`` must be signed with: the stack's, or temporary ones
        its STS issued (None: neither)."""
        if hmac.compare_digest(access_key, self._access_key):
            return self._credentials
        return self._temporary(access_key) if self._temporary is not None else None

    def _presigned(self, environ: dict[str, Any], query: list[tuple[str, str]]) -> str | None:
        fields = dict(query)
        key, _, scope = fields.get("X-Amz-Credential", "").partition("/")
        parts = scope.split("/")
        if not hmac.compare_digest(key, self._access_key) or len(parts) != 4 or parts[2] != "s3":
            return NOT_SIGNED
        try:
            expires = int(fields.get("X-Amz-Expires", "0"))
        except ValueError:
            return NOT_SIGNED
        if not _fresh(fields.get("X-Amz-Date", ""), expires, future=60):
            return NOT_SIGNED
        auth = S3SigV4QueryAuth(self._credentials, "s3", parts[1], expires=expires)
        signed_names = fields.get("X-Amz-SignedHeaders", "host").split(";")
        headers = _headers(environ, signed_names)
        unsigned = "&".join(
            part for part in environ.get("QUERY_STRING", "").split("&") if not part.startswith("X-Amz-Signature=")
        )
        request = AWSRequest(method=environ["REQUEST_METHOD"], url=_url(environ, unsigned), headers=headers)
        request.context["timestamp"] = fields.get("X-Amz-Date", "")
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        if not hmac.compare_digest(expected, fields.get("X-Amz-Signature", "")):
            return NOT_SIGNED
        not_signed = sorted(name for name in _amz_headers(environ) if name not in signed_names)
        if not_signed:
            return f"There were headers present in the request which were not signed: {', '.join(not_signed)}."
        if "content-length" in signed_names and not _body_is(environ, int(headers["Content-Length"])):
            return "The body sent is not the size the URL was signed for (its Content-Length)."
        return None


def _fresh(stamp: str, seconds: int, future: int = _MAX_SKEW_SECONDS) -> bool:
    """Whether a request signed at ``stamp`` (X-Amz-Date) is within ``seconds`` after it (and not far ahead)."""
    try:
        signed = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return False
    now = time.time()
    return signed - future <= now <= signed + seconds


def _headers(environ: dict[str, Any], names: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name in names:
        if name == "host":
            value = environ.get("HTTP_HOST", "")
        elif name == "content-type":
            value = environ.get("CONTENT_TYPE", "")
        elif name == "content-length":
            value = environ.get("CONTENT_LENGTH", "")
        else:
            value = environ.get("HTTP_" + name.upper().replace("-", "_"), "")
        headers["-".join(part.capitalize() for part in name.split("-"))] = value
    if "X-Amz-Content-Sha256" in headers:
        headers["X-Amz-Content-SHA256"] = headers.pop("X-Amz-Content-Sha256")
    return headers


def _url(environ: dict[str, Any], raw_query: str) -> str:
    """The URL as the client signed it: its path and query as sent, not as decoded."""
    raw_path = (environ.get("RAW_URI") or environ.get("REQUEST_URI") or "").split("?")[0]
    path = raw_path or quote(environ.get("PATH_INFO", "/"), safe="/~")
    host = environ.get("HTTP_HOST", "localhost")
    return f"http://{host}{path}" + (f"?{raw_query}" if raw_query else "")


def _read_body(environ: dict[str, Any]) -> bytes:
    """The request body, read whole and put back for moto (only small, non-S3 bodies are read here)."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def _is_s3(environ: dict[str, Any]) -> bool:
    """Whether a request is for S3 (as a presigned URL, or signed for S3), whose clients read XML errors."""
    if "X-Amz-Signature=" in environ.get("QUERY_STRING", ""):
        return True
    return "/s3/aws4_request" in environ.get("HTTP_AUTHORIZATION", "")


def _amz_headers(environ: dict[str, Any]) -> list[str]:
    """The names of the request's ``x-amz-*`` headers, lower case."""
    return [name[5:].lower().replace("_", "-") for name in environ if name.startswith("HTTP_X_AMZ_")]


def _body_is(environ: dict[str, Any], size: int) -> bool:
    """Whether the request's body is ``size`` bytes. One with a Content-Length is read by that header; a chunked
    one is not, so it is read here (up to one byte more than ``size``) and put back with its length."""
    if not environ.get("wsgi.input_terminated") and "HTTP_TRANSFER_ENCODING" not in environ:
        return environ.get("CONTENT_LENGTH") == str(size)
    body = tempfile.SpooledTemporaryFile(max_size=_IN_MEMORY_BODY)  # noqa: SIM115 (moto reads it after this returns)
    remaining = size + 1
    while remaining > 0:
        chunk = environ["wsgi.input"].read(min(remaining, 1024 * 1024))
        if not chunk:
            break
        body.write(chunk)
        remaining -= len(chunk)
    if body.tell() != size:
        body.close()
        return False
    body.seek(0)
    environ["wsgi.input"] = body
    environ["CONTENT_LENGTH"] = str(size)
    environ.pop("wsgi.input_terminated", None)
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    return True
