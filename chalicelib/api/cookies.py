"""The dashboard's session cookie, and the header that makes a cookie-signed write safe from other sites.

A cookie goes with every request a browser sends to the service, whoever's page makes it, so a write signed by
the cookie alone must also carry ``X-Requested-With``: a page of another origin cannot add that header without
a CORS preflight, which the service never answers with a yes. ``SameSite=Strict`` keeps the cookie off other
sites' requests in browsers that honour it; the header covers the ones that do not.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from email.utils import format_datetime

from chalicelib.config import settings
from chalicelib.errors import Forbidden

SESSION_COOKIE = "conveyor_session"
CSRF_HEADER = "X-Requested-With"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_REFUSAL = f"Signing in or out, or a change signed by the session cookie, needs the {CSRF_HEADER} header."


def session_token(headers: Mapping[str, str]) -> str | None:
    """The session cookie's token in a request's ``Cookie`` header, if it has one."""
    header = headers.get("cookie") or ""
    if not header:
        return None
    from http.cookies import CookieError, SimpleCookie  # API clients send no cookie: they never load it (cold start)

    cookie = SimpleCookie()
    try:
        cookie.load(header)
    except CookieError:
        return None
    morsel = cookie.get(SESSION_COOKIE)
    return morsel.value if morsel is not None and morsel.value else None


def require_csrf_header(method: str, headers: Mapping[str, str]) -> None:
    """Forbidden for a write signed by the cookie alone (no Authorization header) without ``X-Requested-With``."""
    if method.upper() in SAFE_METHODS or (headers.get("authorization") or "").strip():
        return
    if session_token(headers) is not None:
        require_header(headers)


def require_header(headers: Mapping[str, str]) -> None:
    """Forbidden without ``X-Requested-With``: what signing in and out always need, so that no other site can
    sign a browser in to an account of its choosing, or out."""
    if not (headers.get(CSRF_HEADER.lower()) or "").strip():
        raise Forbidden(CSRF_REFUSAL)


def session_cookie(token: str, expires: datetime, max_age: int, prefix: str = "") -> str:
    """``Set-Cookie`` for a new session: script cannot read it, it goes to {prefix}/api only (``prefix``: the
    stage's, at API Gateway's stage URL), and never over plain HTTP outside the local stage."""
    return _cookie(token, max_age, format_datetime(expires, usegmt=True), prefix)


def cleared_cookie(prefix: str = "") -> str:
    """``Set-Cookie`` that removes the session cookie from the browser."""
    return _cookie("", 0, "Thu, 01 Jan 1970 00:00:00 GMT", prefix)


def _cookie(value: str, max_age: int, expires: str, prefix: str) -> str:
    attributes = [f"{SESSION_COOKIE}={value}", f"Path={prefix}/api", f"Max-Age={max_age}", f"Expires={expires}"]
    attributes += ["HttpOnly", "SameSite=Strict"]
    if settings().stage != "local":
        attributes.append("Secure")
    return "; ".join(attributes)
