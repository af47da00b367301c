"""What every endpoint shares: the account prefix, authentication, JSON bodies, and error bodies.

Each route is served at ``/api/...`` and at ``/api/account/{accountName}/...`` (the form user-level
``v2.`` keys need). Domain errors become ``{"message": ...}`` here, and Chalice's own error bodies
(``Code``/``Message``) are rewritten to that shape by :func:`error_bodies`, so clients read one form.
The limits every request shares are checked here too: the body's size and nesting, and the length of path
segments and query parameters (docs/api.md, "Limits"). The few reads a public project allows without a key say so
with ``visitor``: such a request, when it carries neither key nor session, is a visitor's (domain/visitors.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chalice import Blueprint, Response
from chalice.app import Request

from chalicelib.api.cookies import require_csrf_header, session_token
from chalicelib.config import settings
from chalicelib.domain import visitors
from chalicelib.domain.auth import Caller, authenticate
from chalicelib.domain.permissions import Permission
from chalicelib.domain.validation import MAX_NESTING_DEPTH, MAX_TEXT_LENGTH, nesting_depth, too_long
from chalicelib.errors import ConveyorError, Invalid, NotFound

ACCOUNT_PREFIX = "/api/account/{prefixAccountName}"
_ANY_CONTENT_TYPE = ["*/*"]  # bodies are parsed here, whatever Content-Type a client sends
# API Gateway takes up to 10 MB and Lambda 6 MB, but nothing the API stores may exceed a DynamoDB item (400 KB):
# a body bigger than this is a mistake, refused before it is parsed.
MAX_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Call:
    """One authenticated request, as a view sees it."""

    caller: Caller
    request: Request

    @property
    def base_url(self) -> str:
        """The URL clients reach the service at: CONVEYOR_BASE_URL, else what this request was sent to."""
        configured = settings().base_url
        if configured:
            return configured.rstrip("/")
        headers = self.request.headers
        return f"{headers.get('x-forwarded-proto', 'http')}://{headers.get('host', 'localhost')}"

    def text(self) -> str:
        """The request body as text (UTF-8); a 400 when it is not, or is bigger than MAX_BODY_BYTES."""
        raw = raw_body(self.request)
        try:
            return raw if isinstance(raw, str) else raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise Invalid("The request body is not UTF-8 text.") from error

    def json(self) -> Any:
        """The request body parsed as JSON; a 400 when it is missing or malformed."""
        return json_body(self.request)


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


View = Callable[..., Any]
# Who a request without a key is, from the account the prefix names (if any) and the route's parameters.
VisitorOf = Callable[[str | None, dict[str, str]], Caller]


def project_visitor(prefix_account: str | None, params: dict[str, str]) -> Caller:
    """A visitor of ``/projects/{accountName}/{projectSlug}/...``, if that project is public."""
    return visitors.of_project(params["accountName"], params["projectSlug"], prefix_account)


def job_visitor(prefix_account: str | None, params: dict[str, str]) -> Caller:
    """A visitor of ``/buildjobs/{jobId}/...``, if it is a build job of a public project."""
    return visitors.of_job(params["jobId"], prefix_account)


class ApiBlueprint:
    """A Chalice Blueprint whose routes authenticate (an API key, or the dashboard's session cookie), check a
    permission and translate errors."""

    def __init__(self, import_name: str) -> None:
        self.blueprint = Blueprint(import_name)

    def route(
        self, path: str, method: str = "GET", permission: Permission | None = None, visitor: VisitorOf | None = None
    ) -> Callable[[View], View]:
        """Serve ``view(call, **path_params)`` at ``/api{path}`` and under the account prefix; without a key too,
        to the callers ``visitor`` finds, when it is given (a public project's reads)."""

        def register(view: View) -> View:
            def handle(**params: str) -> Response:
                return self._dispatch(view, permission, params, visitor)

            for prefix in ("/api", ACCOUNT_PREFIX):
                self.blueprint.route(
                    prefix + path, methods=[method], content_types=_ANY_CONTENT_TYPE, name=view.__name__
                )(handle)
            return view

        return register

    def _dispatch(
        self, view: View, permission: Permission | None, params: dict[str, str], visitor: VisitorOf | None
    ) -> Response:
        request = self.blueprint.current_request
        prefix_account = params.pop("prefixAccountName", None)
        try:
            check_parameters(request, {**params, "account": prefix_account})
            require_csrf_header(request.method, request.headers)
            authorization, session = request.headers.get("authorization"), session_token(request.headers)
            if visitor is not None and not (authorization or "").strip() and session is None:
                caller = visitor(prefix_account, params)  # no key: what a public project shows everyone, else 401
            else:  # a request that carries a key (or a session) is what that key may do, public project or not
                caller = authenticate(authorization, prefix_account, params.get("accountName"), session)
            if permission is not None:
                caller.require(permission)
            return respond(view(Call(caller, request), **params))
        except ConveyorError as error:
            return error_response(error)


def plain_text(text: str) -> Response:
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
