"""/api/projects/status/{badgeId}[/branch/{buildBranch}]: a project's status badge, an SVG for READMEs.

No key: the unguessable badge id is the credential, so the routes are served at /api only (not under the
account prefix). ``Cache-Control: public, max-age=30`` lets browsers and GitHub's image proxy (camo, which
honours it) keep a badge half a minute and no longer, so a README shows a finished build within about
30 s while a busy README costs one read per cache per 30 s; the ETag makes a revalidation a bodiless 304.
"""

from __future__ import annotations

from urllib.parse import unquote

from chalice import Blueprint, Response

from chalicelib.api.http import check_parameters, error_response, etag_of, not_modified
from chalicelib.domain import badges
from chalicelib.errors import ConveyorError
from chalicelib.wire.badges import badge_svg, parse_badge_query

blueprint = Blueprint(__name__)
_ANY = ["*/*"]
CACHE_CONTROL = "public, max-age=30"


def _badge(badge_id: str, branch: str | None = None) -> Response:
    request = blueprint.current_request
    try:
        check_parameters(request, {"badgeId": badge_id, "buildBranch": branch})
        query = parse_badge_query(request.query_params)
        status = badges.build_status(badge_id, None if branch is None else unquote(branch))
    except ConveyorError as error:
        return error_response(error)
    svg = badge_svg(badges.badge_for_status(status, query.texts), query.retina)
    etag = etag_of(svg)
    headers: dict[str, str | list[str]] = {"Cache-Control": CACHE_CONTROL, "ETag": etag}
    if not_modified(request, etag):
        return Response(body="", status_code=304, headers=headers)
    headers |= {"Content-Type": "image/svg+xml", "X-Content-Type-Options": "nosniff"}
    return Response(body=svg, status_code=200, headers=headers)


@blueprint.route("/api/projects/status/{badgeId}", methods=["GET"], content_types=_ANY)
def get_status_badge(badgeId: str) -> Response:
    return _badge(badgeId)


@blueprint.route("/api/projects/status/{badgeId}/branch/{buildBranch}", methods=["GET"], content_types=_ANY)
def get_branch_status_badge(badgeId: str, buildBranch: str) -> Response:
    return _badge(badgeId, buildBranch)
