"""GitHub, and GitHub Enterprise on the operator's server (CONVEYOR_GITHUB_URL, CONVEYOR_GITHUB_API_URL)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.scm.forge import CommitStatus, Forge, github_status
from chalicelib.scm.hook_events import HookEvent, github_shaped

# Conveyor's state -> GitHub's word for it (a build "running" is still pending: GitHub has no such word)
STATES = {"pending": "pending", "running": "pending", "success": "success", "failed": "failure", "cancelled": "error"}


class GitHub(Forge):
    """GitHub's webhooks, pull refs (refs/pull/N/head and /merge) and commit statuses."""

    def hook_event(self, headers: Mapping[str, str], body: dict[str, Any]) -> HookEvent:
        """A delivery of GitHub's webhook, named by X-GitHub-Event."""
        return github_shaped(headers.get("x-github-event", ""), body)

    def status_request(self, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
        """A post to GitHub's statuses API."""
        return github_status(base, repository, status, STATES[status.state])

    def status_headers(self, username: str | None, token: str) -> dict[str, str]:
        """The headers of a post, with the API version GitHub is asked for."""
        versioned = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        return super().status_headers(username, token) | versioned


GITHUB = GitHub(
    "gitHub",
    "GitHub",
    public_host="https://github.com",
    merge_refs=True,
    token_username="x-access-token",  # for app installation tokens and personal access tokens
    webhook="github",
    delivery_header="x-github-delivery",
    api_path="/api/v3",
    public_api="https://api.github.com",
)
