"""Gitea and Forgejo, on the operator's server (CONVEYOR_GITEA_URL): GitHub's payloads and statuses, in its own
headers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.scm.forge import TOKEN_USERS, CommitStatus, Forge, github_status
from chalicelib.scm.hook_events import HookEvent, github_shaped

# Conveyor's state -> Gitea's word for it (GitHub's)
STATES = {"pending": "pending", "running": "pending", "success": "success", "failed": "failure", "cancelled": "error"}


class Gitea(Forge):
    """Gitea's webhooks (GitHub's payloads under X-Gitea-Event, X-Gitea-Delivery, X-Gitea-Signature), pull refs and
    commit statuses."""

    def hook_event(self, headers: Mapping[str, str], body: dict[str, Any]) -> HookEvent:
        """A delivery of Gitea's webhook, named by X-Gitea-Event."""
        return github_shaped(headers.get("x-gitea-event", ""), body, "Gitea")

    def signature(self, headers: Mapping[str, str]) -> str | None:
        """X-Gitea-Signature, which has no "sha256=" before it, or the signature GitHub's headers carry."""
        if headers.get("x-gitea-signature"):
            return "sha256=" + headers["x-gitea-signature"].strip().lower()
        return super().signature(headers)

    def status_request(self, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
        """A post to Gitea's statuses API, which has GitHub's shape."""
        return github_status(base, repository, status, STATES[status.state])

    def authorization(self, username: str | None, token: str) -> dict[str, str]:
        """A user with a password as Basic; a token alone as Gitea's ``token``."""
        if username and username not in TOKEN_USERS:
            return super().authorization(username, token)
        return {"Authorization": f"token {token}"}


GITEA = Gitea(
    "gitea",
    "Gitea",
    merge_refs=True,
    webhook="gitea",
    delivery_header="x-gitea-delivery",
    api_path="/api/v1",
)
