"""A forge: where a project's repository lives, and what Conveyor asks of it (docs/forges.md). The one interface every
forge implements, one module each in scm/forges/ (GitHub, GitLab, Bitbucket Cloud and Server, Gitea and Forgejo,
Azure Repos, Kiln, and repositories given by their URL), listed in scm/forges/__init__.py.

What a forge says: the names it goes by, where its repositories are cloned from, a pull request's refs, its webhook
(reading a delivery, its id, whether it is genuine) and the commit statuses it takes. The defaults are what most
forges do; a forge overrides what it does otherwise. Pure, but for ``post_status``: one request to the forge's API,
with a short timeout, through the outbound guard; what a forge answers other than 2xx is a StatusFailed that says
whether trying again later could help (the forge is down, slow or rate-limiting) or not (the token is refused, the
repository is unknown). Messages name no token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from chalicelib import outbound
from chalicelib.config import forge_api_url, repository_base_url
from chalicelib.core.reprs import FieldsRepr
from chalicelib.errors import Unauthorized
from chalicelib.scm.hook_events import HookEvent

TIMEOUT_SECONDS = 10.0
MAX_DESCRIPTION = 140  # GitHub answers 422 to a longer one; the others take 255
TOKEN_USERS = frozenset({"x-access-token", "oauth2", "x-token-auth", "x-oauth-basic"})


@dataclass(frozen=True, repr=False)
class CommitStatus(FieldsRepr):
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


@dataclass(frozen=True, repr=False)
class Forge(FieldsRepr):
    """One forge, as projects name it (AppVeyor's repositoryProvider), and what Conveyor does with it."""

    repository_type: str  # AppVeyor's repositoryProvider: "gitHub", "stash", ...
    name: str  # as messages name it: "GitHub", "Bitbucket Server", ...
    public_host: str | None = None  # its public server; None: only CONVEYOR_<REPOSITORY_TYPE>_URL names one
    scm: str = "git"  # the source control its repositories speak
    by_url: bool = False  # its repositoryName is a clone URL, not owner/repo on its server
    deploy_keys: bool = True  # it clones ssh://git@host/owner/repo.git with a project's deploy key
    merge_refs: bool = False  # it keeps a pull request's merge with its target, refs/pull/N/merge
    token_username: str | None = None  # the user name it takes with a token alone over HTTPS
    webhook: str | None = None  # its webhook's route, /api/<webhook>/webhook; None: it has none
    delivery_header: str | None = None  # the header with its id of a webhook delivery (the same on a redelivery)
    signature_header: str = "x-hub-signature-256"  # the header with the body's signature
    api_path: str | None = None  # its REST API's path on a server of its own; None: it takes no commit statuses
    public_api: str | None = None  # its REST API on its public host, where that is elsewhere

    def server(self) -> str:
        """Where its repositories are: CONVEYOR_<REPOSITORY_TYPE>_URL, else its public host ("" when neither)."""
        return repository_base_url(self.repository_type, self.public_host or "")

    def clone_url(self, name: str, ssh: bool = False) -> str:
        """Where builds fetch the repository ``name`` from ("" when no server is known, never a path on the service's
        own disk); ``ssh``: its ``ssh://git@host/owner/repo.git`` form, fetched with the project's deploy key."""
        if self.by_url:
            return name
        if ssh:
            host = urlsplit(self.server()).hostname
            return f"ssh://git@{host}/{name}.git" if host else ""
        base = self.server()
        return self.https_url(base, name) if base else ""

    def https_url(self, base: str, name: str) -> str:
        """The repository ``name`` on the server at ``base``, over HTTPS."""
        return f"{base}/{name}.git"

    def pull_refs(self, number: int) -> tuple[str, str | None]:
        """A pull request's head ref, and the ref of its merge with the target branch where the forge keeps one;
        Invalid where it keeps no pull request refs."""
        return f"refs/pull/{number}/head", f"refs/pull/{number}/merge" if self.merge_refs else None

    def hook_event(self, headers: Mapping[str, str], body: dict[str, Any]) -> HookEvent:
        """The event a delivery of its webhook describes (``body``: a JSON object); forges with a webhook say."""
        raise NotImplementedError(f"{self.name} has no webhook.")

    def delivery_id(self, headers: Mapping[str, str]) -> str | None:
        """Its id of this delivery, where it sends one."""
        value = headers.get(self.delivery_header) if self.delivery_header else None
        return value.strip()[:200] if value and value.strip() else None

    def signature(self, headers: Mapping[str, str]) -> str | None:
        """The body's signature as sent, as ``sha256=<hex>``; None where the forge sends a token instead."""
        signature = headers.get(self.signature_header) or headers.get("x-hub-signature-256", "")
        return signature.strip().lower()

    def authenticate(self, headers: Mapping[str, str], body: bytes, secret: str) -> None:
        """Unauthorized unless the delivery is signed with the project's webhook ``secret``."""
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest((self.signature(headers) or "").encode(), expected.encode()):
            raise Unauthorized("The webhook's signature does not match the project's webhook secret.")

    @property
    def takes_statuses(self) -> bool:
        """Whether its commits take statuses."""
        return self.api_path is not None

    def api_url(self) -> str | None:
        """Its REST API: CONVEYOR_<REPOSITORY_TYPE>_API_URL, its public API, or its path on the configured server."""
        base = self.server()
        if configured := forge_api_url(self.repository_type):
            return configured
        if self.public_api and base == self.public_host:
            return self.public_api
        return f"{base}{self.api_path}" if base else None

    def status_request(self, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
        """The URL and JSON body of one post of ``status`` to its API at ``base``, in the forge's own words."""
        raise NotImplementedError(f"{self.name} takes no commit statuses.")

    def authorization(self, username: str | None, token: str) -> dict[str, str]:
        """A token alone goes as the forge's bearer token; a user name with a password (an app password) as Basic."""
        if username and username not in TOKEN_USERS:
            return {"Authorization": "Basic " + base64.b64encode(f"{username}:{token}".encode()).decode()}
        return {"Authorization": f"Bearer {token}"}

    def status_headers(self, username: str | None, token: str) -> dict[str, str]:
        """The headers of a post: JSON, and the token."""
        return {"Content-Type": "application/json", "User-Agent": "Conveyor", **self.authorization(username, token)}

    def status_taken(self, status_code: int, content: bytes) -> bool:
        """Whether an answer other than 2xx still says the status is on the commit."""
        return False

    def post_status(self, repository: str, status: CommitStatus, username: str | None, token: str) -> None:
        """Post ``status`` on ``repository`` ("owner/repo", "group/sub/project", "PROJECT/repo"); StatusFailed
        else."""
        name, base = self.name, self.api_url()
        if not base:
            raise StatusFailed(
                f"{name} statuses need CONVEYOR_{self.repository_type.upper()}_URL: no server is known.", retry=False
            )
        url, body = self.status_request(base, repository, status)
        headers = self.status_headers(username, token)
        import requests  # requests loads where a status is posted: cold start

        from chalicelib.outbound import http

        try:
            response = http.request(
                "POST", url, data=json.dumps(body).encode(), headers=headers, timeout=TIMEOUT_SECONDS
            )
        except outbound.Refused as error:
            raise StatusFailed(f"{name} was not called: {error}", retry=False) from None
        except requests.Timeout:
            raise StatusFailed(f"{name} did not answer within {TIMEOUT_SECONDS:g} s.", retry=True) from None
        except requests.RequestException:  # no details: they would describe the network the service runs in
            raise StatusFailed(f"{name} is unreachable.", retry=True) from None
        except (UnicodeError, ValueError):  # a header the token makes unsendable (not latin-1): no try again helps
            raise StatusFailed(
                f"{name} was not called: the repository credential's token cannot be sent.", False
            ) from None
        with response:
            if 200 <= response.status_code < 300 or self.status_taken(response.status_code, response.content):
                return
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


def quoted_path(repository: str) -> str:
    """``owner/repo`` with each part quoted for a URL's path."""
    return "/".join(quote(part, safe="") for part in repository.split("/"))


def github_status(base: str, repository: str, status: CommitStatus, state: str) -> tuple[str, dict[str, Any]]:
    """The post GitHub's statuses API takes, and Gitea's, which has its shape."""
    body = {"state": state, "context": status.context, "description": status.description[:MAX_DESCRIPTION]}
    if status.target_url:
        body["target_url"] = status.target_url
    return f"{base}/repos/{quoted_path(repository)}/statuses/{quote(status.sha, safe='')}", body


def bitbucket_status(status: CommitStatus, state: str) -> dict[str, Any]:
    """The body Bitbucket Cloud's and Server's build statuses share (each adds its ref in its own way)."""
    shared = {"key": status.context, "state": state, "name": f"Conveyor {status.context.rsplit('/', 1)[-1]}"}
    return shared | {"description": status.description[:MAX_DESCRIPTION], "url": status.target_url or ""}
