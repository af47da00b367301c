"""Bitbucket Cloud: its webhooks (X-Event-Key, signed in X-Hub-Signature) and build statuses. It keeps no pull
request refs, so a pull request is built from its branch, when that is in the same repository."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from chalicelib.errors import Invalid
from chalicelib.scm.forge import CommitStatus, Forge, bitbucket_status, quoted_path
from chalicelib.scm.hook_events import HookEvent, get, pull_request, ref_event, text

# Conveyor's state -> Bitbucket's word for it
STATES = {
    "pending": "INPROGRESS",
    "running": "INPROGRESS",
    "success": "SUCCESSFUL",
    "failed": "FAILED",
    "cancelled": "STOPPED",
}


class Bitbucket(Forge):
    """Bitbucket Cloud's webhooks and build statuses."""

    def pull_refs(self, number: int) -> tuple[str, str | None]:
        """Invalid: Bitbucket Cloud keeps no pull request refs."""
        raise Invalid("Bitbucket Cloud keeps no pull request refs: build the pull request's branch instead.")

    def hook_event(self, headers: Mapping[str, str], body: dict[str, Any]) -> HookEvent:
        """A delivery of Bitbucket's webhook, named by X-Event-Key."""
        event = headers.get("x-event-key", "")
        if event == "repo:push":
            changes = [change for change in get(body, "push", "changes") or [] if isinstance(change, dict)]
            pushed = [change["new"] for change in changes if isinstance(change.get("new"), dict)]
            if not pushed:
                return HookEvent(ignored="Skipped: the push deleted its branch or tag; there is nothing to build.")
            new = pushed[-1]
            kind, name = text(new.get("type")), text(new.get("name"))
            ref = f"refs/tags/{name}" if kind in ("tag", "annotated_tag") else f"refs/heads/{name}"
            login = text(get(new, "target", "author", "user", "nickname"))
            return ref_event(ref, text(get(new, "target", "hash")) or None, author_login=login)
        if event.startswith("pullrequest:"):
            request = body.get("pullrequest") or {}
            return pull_request(
                action=event.removeprefix("pullrequest:"),
                building=("created", "updated"),
                closing=("fulfilled", "rejected"),
                number=request.get("id"),
                title=text(request.get("title")),
                target=text(get(request, "destination", "branch", "name")),
                source=text(get(request, "source", "branch", "name")),
                same_repository=get(request, "source", "repository", "full_name")
                == get(request, "destination", "repository", "full_name"),
                commit_id=text(get(request, "source", "commit", "hash")) or None,
                head_repository=text(get(request, "source", "repository", "full_name")),
                build_source_branch=True,
            )
        return HookEvent(ignored=f"Bitbucket event '{event or 'unnamed'}' starts no build.")

    def status_request(self, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
        """A post to a commit's build statuses."""
        url = f"{base}/repositories/{quoted_path(repository)}/commit/{quote(status.sha, safe='')}/statuses/build"
        return url, {**bitbucket_status(status, STATES[status.state]), "refname": status.ref}


BITBUCKET = Bitbucket(
    "bitBucket",
    "Bitbucket",
    public_host="https://bitbucket.org",
    token_username="x-token-auth",
    webhook="bitbucket",
    delivery_header="x-request-uuid",
    signature_header="x-hub-signature",
    api_path="/api/2.0",
    public_api="https://api.bitbucket.org/2.0",
)
