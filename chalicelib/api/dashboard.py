"""The dashboard: one HTML page and its scripts and styles, from chalicelib/web/, served without a key.

GET /                     the page (every view is a #/... route of its own script)
GET /dashboard/{asset}    a file of chalicelib/web/ by its name; anything else is a 404 in the API's error shape

The page holds no data and no credentials: what it shows it reads through the ``/api`` endpoints, with the
session cookie or the API key its user gives it, under the same permission checks as any client. Only the
files listed in chalicelib/web/ are served (a name is looked up, never joined to a path), each with a
Content-Security-Policy that allows scripts and styles of this origin only, and an ETag for revalidation.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import error_response, etag_of, mount_prefix, not_modified
from chalicelib.errors import NotFound

WEB = Path(__file__).resolve().parent.parent / "web"
PAGE = "index.html"
BASE = '<base href="/">'  # in the page: where its links and the API are, replaced as it is served
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",  # names carry no version: revalidate each time (an ETag makes that cheap)
}


@dataclass(frozen=True)
class Asset:
    body: str
    media_type: str
    etag: str


@cache
def assets() -> dict[str, Asset]:
    """Every file of chalicelib/web/ of a known type, by name (read once per process)."""
    found = {}
    for path in sorted(WEB.iterdir()):
        media_type = MEDIA_TYPES.get(path.suffix)
        if path.is_file() and media_type is not None:
            body = path.read_text(encoding="utf-8")
            found[path.name] = Asset(body, media_type, etag_of(body))
    return found


def _serve(request: Request, name: str, asset: Asset | None) -> Response:
    if asset is None:
        return error_response(NotFound(f"The dashboard has no file named '{name[:100]}'."))
    headers: dict[str, str | list[str]] = {**SECURITY_HEADERS, "Content-Type": asset.media_type, "ETag": asset.etag}
    if not_modified(request, asset.etag):
        return Response(body="", status_code=304, headers=headers)
    return Response(body=asset.body, status_code=200, headers=headers)


def page(prefix: str) -> Asset:
    """The page, its links relative to ``prefix``/ (its <base>): the stage's path at API Gateway's stage URL."""
    template = assets()[PAGE]
    body = template.body.replace(BASE, f'<base href="{html.escape(prefix, quote=True)}/">', 1)
    return replace(template, body=body, etag=etag_of(body))


def dashboard_page(request: Request) -> Response:
    return _serve(request, PAGE, page(mount_prefix(request.context)))


def dashboard_asset(request: Request, asset: str) -> Response:
    return _serve(request, asset, assets().get(asset))


ROUTES = frozenset({("GET", "/"), ("GET", "/dashboard/{asset}")})  # not /api: outside the API's document
