"""The local emulator answers only requests signed with the stack's own secret key.

moto accepts any credentials, and everything on this machine can reach its loopback port, a build's scripts
included: unchecked, a build could read every table, decrypt every secret and overwrite any object. So the
embedded emulator checks each request's AWS Signature Version 4 (in its Authorization header, or, for S3's
presigned URLs, in its query string) with botocore's own signer and the secret key only the stack holds, and
answers 403 otherwise; its /moto-api/ (reset, state) is refused to everybody but the stack.

So an S3 deployment to the local emulator works with the stack's own keys only (or none: the default).
"""

from __future__ import annotations

import hmac
import io
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, quote

from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

_HEADER = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/,]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
    r"\s*SignedHeaders=(?P<headers>[^,]+),\s*Signature=(?P<signature>[0-9a-f]{64})$"
)
_MAX_SKEW_SECONDS = 15 * 60
ADMIN_HEADER = "X-Conveyor-Emulator-Key"


class SignedRequestsOnly:
    """WSGI middleware: requests not signed with ``credentials`` get a 403 and never reach moto."""

    def __init__(self, app: Callable[..., Iterable[bytes]], access_key: str, secret_key: str) -> None:
        self._app = app
        self._access_key = access_key
        self._credentials = Credentials(access_key, secret_key)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith("/moto-api"):
            sent = environ.get("HTTP_" + ADMIN_HEADER.upper().replace("-", "_"), "")
            allowed = hmac.compare_digest(sent, self._credentials.secret_key)
        else:
            allowed = self._signed(environ)
        if allowed:
            return self._app(environ, start_response)
        start_response("403 Forbidden", [("Content-Type", "application/json")])
        return [b'{"message": "Refused: the request is not signed with the local stack\'s credentials."}']

    def _signed(self, environ: dict[str, Any]) -> bool:
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        if any(name == "X-Amz-Signature" for name, _ in query):
            return "HTTP_AUTHORIZATION" not in environ and self._presigned(environ, query)
        match = _HEADER.match(environ.get("HTTP_AUTHORIZATION", ""))
        if match is None or not hmac.compare_digest(match["key"], self._access_key):
            return False
        headers = _headers(environ, match["headers"].split(";"))
        if not _fresh(headers.get("X-Amz-Date", ""), _MAX_SKEW_SECONDS):
            return False
        body = b""
        if match["service"] != "s3" or "X-Amz-Content-SHA256" not in headers:
            body = _read_body(environ)
        auth_type = S3SigV4Auth if match["service"] == "s3" else SigV4Auth
        auth = auth_type(self._credentials, match["service"], match["region"])
        raw_query = environ.get("QUERY_STRING", "")
        request = AWSRequest(method=environ["REQUEST_METHOD"], url=_url(environ, raw_query), data=body, headers=headers)
        request.context["timestamp"] = headers.get("X-Amz-Date", "")
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        return hmac.compare_digest(expected, match["signature"])

    def _presigned(self, environ: dict[str, Any], query: list[tuple[str, str]]) -> bool:
        fields = dict(query)
        key, _, scope = fields.get("X-Amz-Credential", "").partition("/")
        parts = scope.split("/")
        if not hmac.compare_digest(key, self._access_key) or len(parts) != 4 or parts[2] != "s3":
            return False
        try:
            expires = int(fields.get("X-Amz-Expires", "0"))
        except ValueError:
            return False
        if not _fresh(fields.get("X-Amz-Date", ""), expires, future=60):
            return False
        auth = S3SigV4QueryAuth(self._credentials, "s3", parts[1], expires=expires)
        headers = _headers(environ, fields.get("X-Amz-SignedHeaders", "host").split(";"))
        unsigned = "&".join(
            part for part in environ.get("QUERY_STRING", "").split("&") if not part.startswith("X-Amz-Signature=")
        )
        request = AWSRequest(method=environ["REQUEST_METHOD"], url=_url(environ, unsigned), headers=headers)
        request.context["timestamp"] = fields.get("X-Amz-Date", "")
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        return hmac.compare_digest(expected, fields.get("X-Amz-Signature", ""))


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
