"""GitLab, and GitLab on the operator's server (CONVEYOR_GITLAB_URL): merge requests, and a webhook that sends its
secret as a token (X-Gitlab-Token) rather than signing the body."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from chalicelib.errors import Unauthorized
from chalicelib.scm.forge import MAX_DESCRIPTION, CommitStatus, Forge
from chalicelib.scm.hook_events import NO_COMMIT, HookEvent, files, get, pull_request, ref_event, text

# Conveyor's state -> GitLab's word for it
STATES = {"pending": "pending", "running": "running", "success": "success", "failed": "failed", "cancelled": "canceled"}


class GitLab(Forge):
    """GitLab's webhooks, merge request refs (refs/merge-requests/N/head and /merge) and commit statuses."""

    def pull_refs(self, number: int) -> tuple[str, str | None]:
        """refs/merge-requests/N/head, and its merge."""
        return f"refs/merge-requests/{number}/head", f"refs/merge-requests/{number}/merge"

    def hook_event(self, headers: Mapping[str, str], body: dict[str, Any]) -> HookEvent:
        """A delivery of GitLab's webhook, named by its object_kind (or X-Gitlab-Event)."""
        kind = str(body.get("object_kind") or headers.get("x-gitlab-event", ""))
        if kind in ("push", "tag_push", "Push Hook", "Tag Push Hook"):
            if body.get("after") == NO_COMMIT:
                return HookEvent(ignored=f"Skipped: '{text(body.get('ref'))}' was deleted; there is nothing to build.")
            commit_id = text(body.get("checkout_sha")) or text(body.get("after")) or None
            commits = [commit for commit in body.get("commits") or [] if isinstance(commit, dict)]
            head = next((commit for commit in commits if commit.get("id") == commit_id), commits[-1] if commits else {})
            return ref_event(
                body.get("ref"), commit_id, author_login=text(body.get("user_username")), files=files(head)
            )
        if kind in ("merge_request", "Merge Request Hook"):
            attributes = body.get("object_attributes") or {}
            action = text(attributes.get("action"))
            if action == "update" and "oldrev" not in attributes:
                return HookEvent(ignored="Merge request update without new commits starts no build.")
            return pull_request(
                action=action,
                building=("open", "reopen", "update"),
                closing=("close", "merge"),
                number=attributes.get("iid"),
                title=text(attributes.get("title")),
                target=text(attributes.get("target_branch")),
                source=text(attributes.get("source_branch")),
                same_repository=attributes.get("source_project_id") == attributes.get("target_project_id"),
                commit_id=text(get(attributes, "last_commit", "id")) or None,
                head_repository=text(get(attributes, "source", "path_with_namespace")),
            )
        return HookEvent(ignored=f"GitLab event '{kind or 'unnamed'}' starts no build.")

    def signature(self, headers: Mapping[str, str]) -> str | None:
        """None: GitLab sends a token, not a signature."""
        return None

    def authenticate(self, headers: Mapping[str, str], body: bytes, secret: str) -> None:
        """Unauthorized unless X-Gitlab-Token is the project's webhook secret."""
        sent = headers.get("x-gitlab-token", "")
        if not hmac.compare_digest(sent.encode(), secret.encode()):
            raise Unauthorized("The X-Gitlab-Token header does not match the project's webhook secret.")

    def status_request(self, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
        """A post to GitLab's statuses API, on the project's encoded path (a subgroup's too)."""
        body = {
            "state": STATES[status.state],
            "name": status.context,
            "description": status.description[:MAX_DESCRIPTION],
        }
        body["ref"] = status.ref
        if status.target_url:
            body["target_url"] = status.target_url
        return f"{base}/projects/{quote(repository, safe='')}/statuses/{quote(status.sha, safe='')}", body

    def authorization(self, username: str | None, token: str) -> dict[str, str]:
        """GitLab takes the token as a bearer token, whoever its user."""
        return {"Authorization": f"Bearer {token}"}

    def status_taken(self, status_code: int, content: bytes) -> bool:
        """GitLab refuses a state the commit has already (a message posted twice): it is posted."""
        return status_code == 400 and b"Cannot transition status" in content


GITLAB = GitLab(
    "gitLab",
    "GitLab",
    public_host="https://gitlab.com",
    token_username="oauth2",
    webhook="gitlab",
    api_path="/api/v4",
)
