"""/api/projects/status/{badgeId}[/branch/{buildBranch}]: a project's status badge, an SVG for READMEs; and
/api/projects/status/{github|bitbucket}/{owner}/{repo}: a public project's, found by its repository.

No key: the unguessable badge id is the credential (a public repository's name is no secret, and shows only a
public project), so the routes are served at /api only (not under the account prefix). API Gateway takes one
variable name per level of a path, so the repository form's provider is the ``{badgeId}`` segment; a badge id is
32 hex digits, never a provider's name. And it takes ``/{provider}/branch/{repo}`` (an owner named "branch") for
the branch form, which hands it over.

``Cache-Control: public, max-age=30`` lets browsers and GitHub's image proxy (camo, which honours it) keep a badge
half a minute and no longer, so a README shows a finished build within about 30 s while a busy README costs one
read per cache per 30 s; the ETag makes a revalidation a bodiless 304.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response, etag_of, not_modified
from chalicelib.domain.projects import badges
from chalicelib.errors import ConveyorError
from chalicelib.wire.badges import badge_svg, parse_badge_query

CACHE_CONTROL = "public, max-age=30"


def _badge(request: Request, params: dict[str, str | None], status_of: Callable[[], str | None]) -> Response:
    """The badge of the status ``status_of()`` finds (None: no build), the path's ``params`` checked first."""
    try:
        check_parameters(request, params)
        query = parse_badge_query(request.query_params)
        status = status_of()
    except ConveyorError as error:
        return error_response(error)
    svg = badge_svg(badges.badge_for_status(status, query.texts), query.retina)
    etag = etag_of(svg)
    headers: dict[str, str | list[str]] = {"Cache-Control": CACHE_CONTROL, "ETag": etag}
    if not_modified(request, etag):
        return Response(body="", status_code=304, headers=headers)
    headers |= {"Content-Type": "image/svg+xml", "X-Content-Type-Options": "nosniff"}
    return Response(body=svg, status_code=200, headers=headers)


def get_status_badge(request: Request, badgeId: str) -> Response:
    return _badge(request, {"badgeId": badgeId}, lambda: badges.build_status(badgeId))


def get_branch_status_badge(request: Request, badgeId: str, buildBranch: str) -> Response:
    if badges.is_repository_provider(badgeId):  # /status/github/branch/{repo}: the repository form
        return get_repository_status_badge(request, badgeId, "branch", buildBranch)
    params: dict[str, str | None] = {"badgeId": badgeId, "buildBranch": buildBranch}
    return _badge(request, params, lambda: badges.build_status(badgeId, unquote(buildBranch)))


def get_repository_status_badge(request: Request, badgeId: str, repositoryOwner: str, repositoryName: str) -> Response:
    """``badgeId`` is the provider here: ``github`` or ``bitbucket``, in any case."""
    params: dict[str, str | None] = {
        "badgeId": badgeId,
        "repositoryOwner": repositoryOwner,
        "repositoryName": repositoryName,
    }
    query = request.query_params
    branch = (query.get("branch") if query else None) or None
    repository = f"{unquote(repositoryOwner)}/{unquote(repositoryName)}"
    return _badge(request, params, lambda: badges.repository_build_status(badgeId, repository, branch))
