"""Repository webhook payloads read into one event shape, and what the forges' readers (scm/forges/) share: refs,
pull requests, and GitHub's payloads, which Gitea and Forgejo send too under their own headers.

Pure: an event that builds nothing carries ``ignored``, the reason the webhook's answer gives; a payload missing what
its event needs is Invalid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.errors import Invalid

NO_COMMIT = "0" * 40


@dataclass(frozen=True)
class HookEvent:
    """What a webhook asks to build, or why it asks for nothing."""

    ignored: str | None = None
    branch: str = ""  # the branch pushed to, the tag, or a pull request's target branch: what filters look at
    ref: str | None = None  # refs/tags/... for a tag
    commit_id: str | None = None
    pull_request_id: int | None = None
    pull_request_title: str = ""
    source_branch: str | None = None  # a pull request's branch, when it is in the same repository
    head_repository: str = ""  # the repository a pull request's head is in ("owner/repo": a fork's, maybe)
    head_branch: str = ""  # a pull request's branch there
    build_source_branch: bool = False  # a pull request built from its branch (Bitbucket has no pull refs)
    closed_source_branch: str | None = None  # a pull request from this branch closed
    author_login: str = ""
    files: tuple[str, ...] | None = None

    @property
    def is_tag(self) -> bool:
        return bool(self.ref and self.ref.startswith("refs/tags/"))


def text(value: Any) -> str:
    """The value when it is text, else ""."""
    return value if isinstance(value, str) else ""


def get(body: Any, *path: str) -> Any:
    """What ``body`` holds at ``path`` (None where a step is missing or not an object)."""
    for name in path:
        body = body.get(name) if isinstance(body, dict) else None
    return body


def ref_event(ref: Any, commit_id: str | None, **more: Any) -> HookEvent:
    """A push to ``ref``, a branch or a tag; Invalid for any other ref."""
    ref = text(ref)
    if ref.startswith("refs/heads/"):
        return HookEvent(branch=ref.removeprefix("refs/heads/"), commit_id=commit_id, **more)
    if ref.startswith("refs/tags/"):
        return HookEvent(branch=ref.removeprefix("refs/tags/"), ref=ref, commit_id=commit_id, **more)
    raise Invalid("The webhook's ref must be refs/heads/<branch> or refs/tags/<tag>.")


def files(commit: Any) -> tuple[str, ...] | None:
    """The files a pushed commit added, removed or modified, each once; None where the payload does not say."""
    if not isinstance(commit, dict) or not any(key in commit for key in ("added", "removed", "modified")):
        return None
    names = [
        name for key in ("added", "removed", "modified") for name in commit.get(key) or [] if isinstance(name, str)
    ]
    return tuple(dict.fromkeys(names))


def github_shaped(event: str, body: dict[str, Any], forge: str = "GitHub") -> HookEvent:
    """A GitHub-shaped delivery (GitHub's, Gitea's) of the named ``event``."""
    if event == "ping":
        return HookEvent(ignored="ping: the webhook is set up.")
    if event == "push":
        if body.get("deleted") or body.get("after") == NO_COMMIT:
            return HookEvent(ignored=f"Skipped: '{text(body.get('ref'))}' was deleted; there is nothing to build.")
        head = body.get("head_commit") or {}
        commit_id = text(head.get("id")) or text(body.get("after")) or None
        login = text(get(head, "author", "username"))
        return ref_event(body.get("ref"), commit_id, author_login=login, files=files(head))
    if event == "pull_request":
        return pull_request(
            action=text(body.get("action")),
            building=("opened", "synchronize", "synchronized", "reopened"),  # Gitea says synchronized
            closing=("closed",),
            number=body.get("number"),
            title=text(get(body, "pull_request", "title")),
            target=text(get(body, "pull_request", "base", "ref")),
            source=text(get(body, "pull_request", "head", "ref")),
            same_repository=get(body, "pull_request", "head", "repo", "id")
            == get(body, "pull_request", "base", "repo", "id"),
            commit_id=text(get(body, "pull_request", "head", "sha")) or None,
            head_repository=text(get(body, "pull_request", "head", "repo", "full_name")),
        )
    return HookEvent(ignored=f"{forge} event '{event or 'unnamed'}' starts no build.")


def pull_request(
    *,
    action: str,
    building: tuple[str, ...],
    closing: tuple[str, ...],
    number: Any,
    title: str,
    target: str,
    source: str,
    same_repository: bool,
    commit_id: str | None,
    head_repository: str = "",
    build_source_branch: bool = False,
) -> HookEvent:
    """A pull request's event: built when its ``action`` is one of ``building``, noted closed for ``closing``."""
    own_branch = source if same_repository and source else None
    if action in closing:
        return HookEvent(ignored=f"Pull request action '{action}' starts no build.", closed_source_branch=own_branch)
    if action not in building:
        return HookEvent(ignored=f"Pull request action '{action or 'unnamed'}' starts no build.")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1 or not target:
        raise Invalid("The pull request event names no pull request number or target branch.")
    if build_source_branch and not own_branch:
        return HookEvent(ignored="Skipped: pull requests from other repositories are not built from Bitbucket.")
    return HookEvent(
        branch=target,
        commit_id=commit_id,
        pull_request_id=number,
        pull_request_title=title,
        source_branch=own_branch,
        head_repository=head_repository,
        head_branch=source,
        build_source_branch=build_source_branch,
    )
