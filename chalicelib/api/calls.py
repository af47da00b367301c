"""An API route's request: its caller authenticated (an API key, or the dashboard's session cookie), its permission
checked, its view's result or error answered as HTTP.

The few reads a public project allows without a key say so in the route table (``visitor``): such a request, when
it carries neither key nor session, is a visitor's (domain/team/visitors.py). This module reads tables (through the
domain), so it loads with the first API request, not with the app (routes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.cookies import require_csrf_header, session_token
from chalicelib.api.http import Visitor, check_parameters, error_response, json_body, raw_body, respond
from chalicelib.config import settings
from chalicelib.core.reprs import FieldsRepr
from chalicelib.domain.team import visitors
from chalicelib.domain.team.auth import Caller, authenticate
from chalicelib.domain.team.permissions import Permission
from chalicelib.errors import ConveyorError, Invalid


@dataclass(frozen=True, repr=False)
class Call(FieldsRepr):
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


View = Callable[..., Any]


def _project_visitor(prefix_account: str | None, params: dict[str, str]) -> Caller:
    return visitors.of_project(params["accountName"], params["projectSlug"], prefix_account)


def _job_visitor(prefix_account: str | None, params: dict[str, str]) -> Caller:
    return visitors.of_job(params["jobId"], prefix_account)


# Who a request without a key is, from the account the prefix names (if any) and the route's parameters: the
# visitor of that public project, or of that public project's job; else a 401.
_VISITORS: dict[Visitor, Callable[[str | None, dict[str, str]], Caller]] = {
    Visitor.PROJECT: _project_visitor,
    Visitor.JOB: _job_visitor,
}


def answer(
    view: View, permission: Permission | None, visitor: Visitor | None, request: Request, params: dict[str, str]
) -> Response:
    """``view(call, **params)`` as HTTP, once the caller is authenticated and holds ``permission``; without a key
    too, when the route names a ``visitor`` (a public project's reads)."""
    prefix_account = params.pop("prefixAccountName", None)
    try:
        check_parameters(request, {**params, "account": prefix_account})
        require_csrf_header(request.method, request.headers)
        authorization, session = request.headers.get("authorization"), session_token(request.headers)
        if visitor is not None and not (authorization or "").strip() and session is None:
            caller = _VISITORS[visitor](
                prefix_account, params
            )  # no key: what a public project shows everyone, else 401
        else:  # a request that carries a key (or a session) is what that key may do, public project or not
            caller = authenticate(authorization, prefix_account, params.get("accountName"), session)
        if permission is not None:
            caller.require(permission)
        return respond(view(Call(caller, request), **params))
    except ConveyorError as error:
        return error_response(error)
