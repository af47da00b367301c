"""Repository webhook payloads (GitHub, Gitea and Forgejo, GitLab, Bitbucket, the generic git hook) read into one
event shape. Gitea sends GitHub's payloads under its own headers (X-Gitea-Event, X-Gitea-Delivery).

Pure: headers and the parsed body in, a HookEvent out, for each provider core/webhooks.py names. An event that
builds nothing carries ``ignored``, the reason the webhook's answer gives; a payload missing what its event needs is
Invalid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.errors import Invalid

_NO_COMMIT = "0" * 40


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


def delivery_id(provider: str, headers: Mapping[str, str]) -> str | None:
    """The provider's id of this delivery (the same on a redelivery), where it sends one."""
    header = {"github": "x-github-delivery", "gitea": "x-gitea-delivery", "bitbucket": "x-request-uuid"}.get(provider)
    value = headers.get(header) if header else None
    return value.strip()[:200] if value and value.strip() else None


def read_event(provider: str, headers: Mapping[str, str], body: Any) -> HookEvent:
    """The event a provider's webhook delivery describes."""
    if not isinstance(body, dict):
        raise Invalid("The webhook body must be a JSON object.")
    if provider == "github":
        return _github(headers.get("x-github-event", ""), body)
    if provider == "gitea":
        return _github(headers.get("x-gitea-event", ""), body, "Gitea")
    if provider == "gitlab":
        return _gitlab(str(body.get("object_kind") or headers.get("x-gitlab-event", "")), body)
    if provider == "bitbucket":
        return _bitbucket(headers.get("x-event-key", ""), body)
    return _generic(body)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _get(body: Any, *path: str) -> Any:
    for name in path:
        body = body.get(name) if isinstance(body, dict) else None
    return body


def _ref_event(ref: Any, commit_id: str | None, **more: Any) -> HookEvent:
    ref = _text(ref)
    if ref.startswith("refs/heads/"):
        return HookEvent(branch=ref.removeprefix("refs/heads/"), commit_id=commit_id, **more)
    if ref.startswith("refs/tags/"):
        return HookEvent(branch=ref.removeprefix("refs/tags/"), ref=ref, commit_id=commit_id, **more)
    raise Invalid("The webhook's ref must be refs/heads/<branch> or refs/tags/<tag>.")


def _files(commit: Any) -> tuple[str, ...] | None:
    if not isinstance(commit, dict) or not any(key in commit for key in ("added", "removed", "modified")):
        return None
    names = [
        name for key in ("added", "removed", "modified") for name in commit.get(key) or [] if isinstance(name, str)
    ]
    return tuple(dict.fromkeys(names))


def _github(event: str, body: dict[str, Any], forge: str = "GitHub") -> HookEvent:
    if event == "ping":
        return HookEvent(ignored="ping: the webhook is set up.")
    if event == "push":
        if body.get("deleted") or body.get("after") == _NO_COMMIT:
            return HookEvent(ignored=f"Skipped: '{_text(body.get('ref'))}' was deleted; there is nothing to build.")
        head = body.get("head_commit") or {}
        commit_id = _text(head.get("id")) or _text(body.get("after")) or None
        login = _text(_get(head, "author", "username"))
        return _ref_event(body.get("ref"), commit_id, author_login=login, files=_files(head))
    if event == "pull_request":
        return _pull_request(
            action=_text(body.get("action")),
            building=("opened", "synchronize", "synchronized", "reopened"),  # Gitea says synchronized
            closing=("closed",),
            number=body.get("number"),
            title=_text(_get(body, "pull_request", "title")),
            target=_text(_get(body, "pull_request", "base", "ref")),
            source=_text(_get(body, "pull_request", "head", "ref")),
            same_repository=_get(body, "pull_request", "head", "repo", "id")
            == _get(body, "pull_request", "base", "repo", "id"),
            commit_id=_text(_get(body, "pull_request", "head", "sha")) or None,
            head_repository=_text(_get(body, "pull_request", "head", "repo", "full_name")),
        )
    return HookEvent(ignored=f"{forge} event '{event or 'unnamed'}' starts no build.")


def _gitlab(kind: str, body: dict[str, Any]) -> HookEvent:
    if kind in ("push", "tag_push", "Push Hook", "Tag Push Hook"):
        if body.get("after") == _NO_COMMIT:
            return HookEvent(ignored=f"Skipped: '{_text(body.get('ref'))}' was deleted; there is nothing to build.")
        commit_id = _text(body.get("checkout_sha")) or _text(body.get("after")) or None
        commits = [commit for commit in body.get("commits") or [] if isinstance(commit, dict)]
        head = next((commit for commit in commits if commit.get("id") == commit_id), commits[-1] if commits else {})
        return _ref_event(body.get("ref"), commit_id, author_login=_text(body.get("user_username")), files=_files(head))
    if kind in ("merge_request", "Merge Request Hook"):
        attributes = body.get("object_attributes") or {}
        action = _text(attributes.get("action"))
        if action == "update" and "oldrev" not in attributes:
            return HookEvent(ignored="Merge request update without new commits starts no build.")
        return _pull_request(
            action=action,
            building=("open", "reopen", "update"),
            closing=("close", "merge"),
            number=attributes.get("iid"),
            title=_text(attributes.get("title")),
            target=_text(attributes.get("target_branch")),
            source=_text(attributes.get("source_branch")),
            same_repository=attributes.get("source_project_id") == attributes.get("target_project_id"),
            commit_id=_text(_get(attributes, "last_commit", "id")) or None,
            head_repository=_text(_get(attributes, "source", "path_with_namespace")),
        )
    return HookEvent(ignored=f"GitLab event '{kind or 'unnamed'}' starts no build.")


def _bitbucket(event: str, body: dict[str, Any]) -> HookEvent:
    if event == "repo:push":
        changes = [change for change in _get(body, "push", "changes") or [] if isinstance(change, dict)]
        pushed = [change["new"] for change in changes if isinstance(change.get("new"), dict)]
        if not pushed:
            return HookEvent(ignored="Skipped: the push deleted its branch or tag; there is nothing to build.")
        new = pushed[-1]
        kind, name = _text(new.get("type")), _text(new.get("name"))
        ref = f"refs/tags/{name}" if kind in ("tag", "annotated_tag") else f"refs/heads/{name}"
        login = _text(_get(new, "target", "author", "user", "nickname"))
        return _ref_event(ref, _text(_get(new, "target", "hash")) or None, author_login=login)
    if event.startswith("pullrequest:"):
        request = body.get("pullrequest") or {}
        return _pull_request(
            action=event.removeprefix("pullrequest:"),
            building=("created", "updated"),
            closing=("fulfilled", "rejected"),
            number=request.get("id"),
            title=_text(request.get("title")),
            target=_text(_get(request, "destination", "branch", "name")),
            source=_text(_get(request, "source", "branch", "name")),
            same_repository=_get(request, "source", "repository", "full_name")
            == _get(request, "destination", "repository", "full_name"),
            commit_id=_text(_get(request, "source", "commit", "hash")) or None,
            head_repository=_text(_get(request, "source", "repository", "full_name")),
            build_source_branch=True,
        )
    return HookEvent(ignored=f"Bitbucket event '{event or 'unnamed'}' starts no build.")


def _generic(body: dict[str, Any]) -> HookEvent:
    """``{"ref": "refs/heads/<branch>", "commit": "<sha>"}``; ``config`` (an appveyor.yml) is not used."""
    commit_id = _text(body.get("commit")) or _text(body.get("after")) or None
    return _ref_event(body.get("ref"), commit_id)


def _pull_request(
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
