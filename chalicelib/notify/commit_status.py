"""A build's state on its commit, as each forge takes it: GitHub, GitHub Enterprise, GitLab, Bitbucket Cloud and
Server, Gitea and Forgejo (reference: scm-and-workflow.md §1).

One request a call, with a short timeout, through the outbound guard; what a forge answers other than 2xx is a
StatusFailed that says whether trying again later could help (the forge is down, slow or rate-limiting) or not
(the token is refused, the repository is unknown). Messages name no token.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from chalicelib import outbound
from chalicelib.config import forge_api_url, repository_base_url

TIMEOUT_SECONDS = 10.0
MAX_DESCRIPTION = 140  # GitHub answers 422 to a longer one; the others take 255
TOKEN_USERS = frozenset({"x-access-token", "oauth2", "x-token-auth", "x-oauth-basic"})
# provider -> the forge's name in messages, its public web host, its API there, the path the API has on a server
FORGES: dict[str, tuple[str, str | None, str | None, str]] = {
    "gitHub": ("GitHub", "https://github.com", "https://api.github.com", "/api/v3"),
    "gitLab": ("GitLab", "https://gitlab.com", None, "/api/v4"),
    "bitBucket": ("Bitbucket", "https://bitbucket.org", "https://api.bitbucket.org/2.0", "/api/2.0"),
    "stash": ("Bitbucket Server", None, None, "/rest/api/latest"),
    "gitea": ("Gitea", None, None, "/api/v1"),
}
# Conveyor's state -> each forge's word for it (a build "running" is still pending where a forge has no such word)
_STATES: dict[str, dict[str, str]] = {
    "gitHub": {"pending": "pending", "running": "pending", "success": "success", "failed": "failure"},
    "gitea": {"pending": "pending", "running": "pending", "success": "success", "failed": "failure"},
    "gitLab": {"pending": "pending", "running": "running", "success": "success", "failed": "failed"},
    "bitBucket": {"pending": "INPROGRESS", "running": "INPROGRESS", "success": "SUCCESSFUL", "failed": "FAILED"},
    "stash": {"pending": "INPROGRESS", "running": "INPROGRESS", "success": "SUCCESSFUL", "failed": "FAILED"},
}
_CANCELLED = {"gitHub": "error", "gitea": "error", "gitLab": "canceled", "bitBucket": "STOPPED", "stash": "CANCELLED"}


@dataclass(frozen=True)
class CommitStatus:
    """What one post says: a build's state on one commit."""

    state: str  # pending, running, success, failed or cancelled
    sha: str
    context: str  # "continuous-integration/conveyor/branch" or ".../pr": what branch protection rules name
    description: str
    target_url: str | None  # the build in the dashboard (None: the service knows no URL of its own)
    ref: str  # the branch (a pull request's source branch) or tag the commit was built for
    build_number: int
    is_tag: bool = False  # ``ref`` names a tag


class StatusFailed(Exception):
    """The forge did not take the status; str() says why, for the build's messages."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


def forge_name(provider: str) -> str | None:
    """The forge's name, for a provider whose commits take statuses; None for any other."""
    forge = FORGES.get(provider)
    return forge[0] if forge else None


def api_url(provider: str) -> str | None:
    """The forge's REST API: CONVEYOR_<PROVIDER>_API_URL, its public API, or its path on the configured server."""
    _, public_host, public_api, path = FORGES[provider]
    base = repository_base_url(provider, public_host or "")
    if configured := forge_api_url(provider):
        return configured
    if public_api and base == public_host:
        return public_api
    return f"{base}{path}" if base else None


def post(provider: str, repository: str, status: CommitStatus, username: str | None, token: str) -> None:
    """Post ``status`` on ``repository`` ("owner/repo", "group/sub/project", "PROJECT/repo"); StatusFailed else."""
    name = forge_name(provider) or provider
    base = api_url(provider)
    if not base:
        raise StatusFailed(f"{name} statuses need CONVEYOR_{provider.upper()}_URL: no server is known.", retry=False)
    url, body = _request(provider, base, repository, status)
    headers = {"Content-Type": "application/json", "User-Agent": "Conveyor"}
    headers |= _authorization(provider, username, token)
    if provider == "gitHub":
        headers |= {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    import requests  # requests loads where a status is posted: cold start

    from chalicelib.outbound import http

    try:
        response = http.request("POST", url, data=json.dumps(body).encode(), headers=headers, timeout=TIMEOUT_SECONDS)
    except outbound.Refused as error:
        raise StatusFailed(f"{name} was not called: {error}", retry=False) from None
    except requests.Timeout:
        raise StatusFailed(f"{name} did not answer within {TIMEOUT_SECONDS:g} s.", retry=True) from None
    except requests.RequestException:  # no details: they would describe the network the service runs in
        raise StatusFailed(f"{name} is unreachable.", retry=True) from None
    except (UnicodeError, ValueError):  # a header the token makes unsendable (not latin-1): no try again helps
        raise StatusFailed(f"{name} was not called: the repository credential's token cannot be sent.", False) from None
    with response:
        if 200 <= response.status_code < 300:
            return
        if provider == "gitLab" and response.status_code == 400 and b"Cannot transition status" in response.content:
            return  # GitLab refuses a state the commit has already (a message posted twice): it is posted
        limited = response.status_code == 403 and (
            response.headers.get("retry-after") or response.headers.get("x-ratelimit-remaining") == "0"
        )  # GitHub's rate limit, which passes
        retry = response.status_code == 429 or response.status_code >= 500 or bool(limited)
        hint = "" if limited else _HINTS.get(response.status_code, "")
        raise StatusFailed(f"{name} answered {response.status_code} {response.reason}.{hint}", retry=retry)


_HINTS = {
    401: " The repository credential's token was refused.",
    403: " The repository credential's token may not set commit statuses (GitHub: the repo:status scope).",
    404: " The repository is not found with the repository credential's token.",
}


def _request(provider: str, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
    """The URL and JSON body of one post, in the forge's own words."""
    state = _CANCELLED[provider] if status.state == "cancelled" else _STATES[provider][status.state]
    description = status.description[:MAX_DESCRIPTION]
    sha = quote(status.sha, safe="")
    if provider in ("gitHub", "gitea"):
        body = {"state": state, "context": status.context, "description": description}
        if status.target_url:
            body["target_url"] = status.target_url
        return f"{base}/repos/{_path(repository)}/statuses/{sha}", body
    if provider == "gitLab":
        body = {"state": state, "name": status.context, "description": description, "ref": status.ref}
        if status.target_url:
            body["target_url"] = status.target_url
        return f"{base}/projects/{quote(repository, safe='')}/statuses/{sha}", body
    shared = {"key": status.context, "state": state, "name": f"Conveyor {status.context.rsplit('/', 1)[-1]}"}
    shared |= {"description": description, "url": status.target_url or ""}
    if provider == "bitBucket":
        return f"{base}/repositories/{_path(repository)}/commit/{sha}/statuses/build", {**shared, "refname": status.ref}
    project, _, slug = repository.partition("/")
    url = f"{base}/projects/{quote(project, safe='')}/repos/{quote(slug, safe='')}/commits/{sha}/builds"
    ref = f"refs/{'tags' if status.is_tag else 'heads'}/{status.ref}"
    return url, {**shared, "ref": ref, "buildNumber": str(status.build_number)}


def _path(repository: str) -> str:
    return "/".join(quote(part, safe="") for part in repository.split("/"))


def _authorization(provider: str, username: str | None, token: str) -> dict[str, str]:
    """A token alone goes as the forge's bearer token; a user name with a password (an app password) as Basic."""
    if provider != "gitLab" and username and username not in TOKEN_USERS:
        return {"Authorization": "Basic " + base64.b64encode(f"{username}:{token}".encode()).decode()}
    if provider == "gitea":
        return {"Authorization": f"token {token}"}
    return {"Authorization": f"Bearer {token}"}
