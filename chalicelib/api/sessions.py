"""/api/session: the dashboard's sign-in (a session cookie) and sign-out; /api/caller: who a request acts for.

POST   /api/session {"email", "password", "accountName"?}  -> 204, Set-Cookie: the session
DELETE /api/session                                          -> 204, the cookie cleared and its session ended
GET    /api/caller                                           -> the user, account and permissions of the key or cookie

Signing in takes no key; the session cookie then authenticates every ``/api`` route as an account-level key of
its user does (chalicelib/api/cookies.py says how writes signed by it are kept safe from other sites).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.calls import Call
from chalicelib.api.cookies import cleared_cookie, require_header, session_cookie, session_token
from chalicelib.api.http import check_parameters, error_response, json_body, mount_prefix
from chalicelib.domain.team import sessions
from chalicelib.errors import ConveyorError
from chalicelib.wire.sessions import caller_json, parse_sign_in


def _session_call(request: Request, answer: Callable[[], str]) -> Response:
    """204 with the ``Set-Cookie`` that ``answer`` returns, or the error it raised."""
    try:
        check_parameters(request, {})
        require_header(request.headers)
        return Response(body="", status_code=204, headers={"Set-Cookie": answer(), "Cache-Control": "no-store"})
    except ConveyorError as error:
        return error_response(error)


def sign_in(request: Request) -> Response:
    def answer() -> str:
        email, password, account_name = parse_sign_in(json_body(request))
        token, session = sessions.sign_in(email, password, account_name, source_address(request.context))
        return session_cookie(token, session.expires, sessions.SESSION_SECONDS, mount_prefix(request.context))

    return _session_call(request, answer)


def source_address(context: Mapping[str, Any]) -> str:
    """The client's address as API Gateway saw the connection (``identity.sourceIp``): not a header it could set."""
    identity = context.get("identity")
    return str(identity.get("sourceIp") or "") if isinstance(identity, Mapping) else ""


def sign_out(request: Request) -> Response:
    def answer() -> str:
        token = session_token(request.headers)
        if token is not None:
            sessions.sign_out(token)
        return cleared_cookie(mount_prefix(request.context))

    return _session_call(request, answer)


def get_caller(call: Call) -> dict[str, Any]:
    return caller_json(call.caller, sessions.whoami(call.caller))
