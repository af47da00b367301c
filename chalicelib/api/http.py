"""What every endpoint shares: the account prefix, JSON bodies, the limits every request is held to, and error
bodies.

Each API route is served at ``/api/...`` and at ``/api/account/{accountName}/...`` (the form user-level ``v2.``
keys need); calls.py authenticates its caller. Domain errors become ``{"message": ...}`` here, and Chalice's own
error bodies (``Code``/``Message``) are rewritten to that shape by :func:`error_bodies`, so clients read one form.
The limits every request shares are checked here too: the body's size and nesting, and the length of path
segments and query parameters (docs/api.md, "Limits"). Nothing here reads a table: app.py imports this module
(for :func:`error_bodies`) with the route table, before any request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.domain.shared.validation import MAX_NESTING_DEPTH, MAX_TEXT_LENGTH, nesting_depth, too_long
from chalicelib.errors import ConveyorError, Invalid, NotFound

ACCOUNT_PREFIX = "/api/account/{prefixAccountName}"
# API Gateway takes up to 10 MB and Lambda 6 MB, but nothing the API stores may exceed a DynamoDB item (400 KB):
# a body bigger than this is a mistake, refused before it is parsed.
MAX_BODY_BYTES = 1024 * 1024


def mount_prefix(context: Mapping[str, Any]) -> str:
    """What comes before the app's own routes in the URL of a request (of its API Gateway ``context``): ``/prod``
    at the stage URL (``.../prod/api/...``), ``""`` at a custom domain's root or in the local stack. Links and
    cookie paths the service gives a browser start with it."""
    path = str(context.get("path") or "")
    route = str(context.get("resourcePath") or "")
    if route == "/":
        return path.rstrip("/")
    if "{" in route or not path.endswith(route):
        return ""
    return path.removesuffix(route)


def etag_of(body: str) -> str:
    """A strong ETag of a response body that depends on nothing else (a badge, a dashboard file)."""
    return '"' + hashlib.sha256(body.encode("utf-8")).hexdigest()[:32] + '"'


def not_modified(request: Request, etag: str) -> bool:
    """Whether the request's ``If-None-Match`` names ``etag`` (weakly compared, as RFC 9110 says it is)."""
    sent = request.headers.get("if-none-match", "")
    return etag in {tag.strip().removeprefix("W/") for tag in sent.split(",")}


def raw_body(request: Request) -> bytes | str:
    """The request body as sent; a 400 naming the limit when it is bigger than MAX_BODY_BYTES."""
    raw = request.raw_body or b""
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", errors="surrogatepass"))
    if size > MAX_BODY_BYTES:
        raise Invalid(f"The request body is {size} bytes long; at most {MAX_BODY_BYTES} bytes are accepted.")
    return raw


def json_body(request: Request, required: bool = True) -> Any:
    """The request body parsed as JSON, whatever its Content-Type; a 400 when it is malformed, too big or too
    deeply nested (or missing and ``required``; an optional missing body is ``{}``)."""
    raw = raw_body(request)
    if not raw.strip():
        if required:
            raise Invalid("A JSON request body is required.")
        return {}
    try:
        document = json.loads(raw, parse_constant=_no_constant)
        too_deep = nesting_depth(document, MAX_NESTING_DEPTH) > MAX_NESTING_DEPTH
    except (ValueError, UnicodeDecodeError) as error:
        raise Invalid(f"The request body is not valid JSON: {error}") from error
    except RecursionError:  # deeper than the parser goes, so deeper than the limit too
        too_deep = True
    if too_deep:
        raise Invalid(f"The request body is nested too deeply: at most {MAX_NESTING_DEPTH} levels are accepted.")
    return document


def _no_constant(name: str) -> Any:
    """NaN and Infinity are no JSON numbers (Python's parser would take them)."""
    raise ValueError(f"{name} is not a JSON number")


def check_parameters(request: Request, path_params: dict[str, str | None]) -> None:
    """Path segments and query parameters within MAX_TEXT_LENGTH characters. A longer segment names nothing
    (404, as an id that is not a number does); a longer query parameter is a 400 naming it."""
    for name, value in path_params.items():
        if value is not None and len(value) > MAX_TEXT_LENGTH:
            raise NotFound(f"Not found: no {name} is longer than {MAX_TEXT_LENGTH} characters.")
    query = request.query_params
    if query is None:
        return
    for name in query:
        if len(name) > MAX_TEXT_LENGTH or any(len(value) > MAX_TEXT_LENGTH for value in query.getlist(name)):
            raise too_long(name[:MAX_TEXT_LENGTH], MAX_TEXT_LENGTH)


class Visitor(Enum):
    """Who an API route's request without a key (nor a session) may be, when the route says: a visitor of a public
    project (``/projects/{accountName}/{projectSlug}/...``), or of one of its build jobs (``/buildjobs/{jobId}/...``).
    Anywhere else such a request is a 401 (calls.py)."""

    PROJECT = "project"
    JOB = "job"


def plain_text(text: str) -> Response:
    """``text`` as a 200 of ``text/plain``."""
    return Response(body=text, status_code=200, headers={"Content-Type": "text/plain; charset=utf-8"})


def respond(result: Any) -> Response:
    """A view's result as HTTP: None is 204 with no body, anything else 200 JSON."""
    if isinstance(result, Response):
        return result
    if result is None:
        return Response(body="", status_code=204)
    return Response(body=result, status_code=200, headers={"Content-Type": "application/json"})


def error_response(error: ConveyorError) -> Response:
    body: dict[str, Any] = {"message": error.message}
    if isinstance(error, Invalid) and error.model_state:
        body["modelState"] = error.model_state
    return Response(body=body, status_code=error.status, headers={"Content-Type": "application/json"})


def error_bodies(event: Request, get_response: Callable[[Request], Response]) -> Response:
    """Middleware: Chalice's own errors (405, 415, 500, ...) in the API's ``{"message"}`` shape."""
    response = get_response(event)
    body = response.body
    if isinstance(body, dict) and set(body) == {"Code", "Message"}:
        message = body["Message"]
        if response.status_code >= 500:
            message = "An internal error occurred; it has been logged."
        response.body = {"message": message}
    return response
