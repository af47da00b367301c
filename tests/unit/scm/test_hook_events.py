"""Repository webhook payloads read into one event: what each asks to build, or why nothing. No IO."""

from __future__ import annotations

import pytest

from chalicelib.errors import Invalid
from chalicelib.scm.forges import delivery_id, read_event
from chalicelib.scm.hook_events import HookEvent

SHA = "a" * 40


def test_a_github_push_to_a_branch_builds_its_head_commit_with_the_files_it_touched() -> None:
    head = {"id": SHA, "author": {"username": "ada"}, "added": ["a.py"], "modified": ["b.py", "a.py"]}

    event = read_event("github", {"x-github-event": "push"}, {"ref": "refs/heads/main", "head_commit": head})

    assert event == HookEvent(branch="main", commit_id=SHA, author_login="ada", files=("a.py", "b.py"))


def test_a_tag_push_is_a_tag_build_and_a_deleted_branch_builds_nothing() -> None:
    tag = read_event("gitea", {"x-gitea-event": "push"}, {"ref": "refs/tags/v1.0", "after": SHA})
    deleted = read_event("github", {"x-github-event": "push"}, {"ref": "refs/heads/old", "deleted": True})

    assert (tag.is_tag, tag.branch, tag.commit_id) == (True, "v1.0", SHA)
    assert deleted.ignored == "Skipped: 'refs/heads/old' was deleted; there is nothing to build."


def test_a_pull_request_from_a_fork_builds_against_its_target_and_its_closing_builds_nothing() -> None:
    body = {
        "action": "opened",
        "number": 7,
        "pull_request": {
            "title": "Fix",
            "base": {"ref": "main", "repo": {"id": 1}},
            "head": {"ref": "fix", "sha": SHA, "repo": {"id": 2, "full_name": "eve/app"}},
        },
    }

    opened = read_event("github", {"x-github-event": "pull_request"}, body)
    closed = read_event("github", {"x-github-event": "pull_request"}, {**body, "action": "closed"})

    assert (opened.branch, opened.pull_request_id, opened.head_repository) == ("main", 7, "eve/app")
    assert opened.source_branch is None  # another repository's branch is not this one's
    assert closed.ignored == "Pull request action 'closed' starts no build."


def test_a_ping_builds_nothing_and_a_body_that_is_not_an_object_or_a_ref_elsewhere_is_refused() -> None:
    assert read_event("github", {"x-github-event": "ping"}, {}).ignored == "ping: the webhook is set up."
    with pytest.raises(Invalid, match="must be a JSON object"):
        read_event("github", {"x-github-event": "push"}, [])
    with pytest.raises(Invalid, match="refs/heads/<branch> or refs/tags/<tag>"):
        read_event("github", {"x-github-event": "push"}, {"ref": "refs/notes/x", "after": SHA})


def test_a_redelivery_is_known_by_the_providers_delivery_id() -> None:
    assert delivery_id("github", {"x-github-delivery": " 72d3162e "}) == "72d3162e"
    assert delivery_id("gitlab", {"x-gitlab-event-uuid": "x"}) is None
