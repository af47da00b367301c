"""The forges whose webhooks Conveyor reads: each has its URL, and its deliveries are read as its own payloads."""

from __future__ import annotations

from chalicelib.api.routes import ROUTES
from chalicelib.core.webhooks import WEBHOOK_PROVIDERS
from chalicelib.scm.forges import read_event


def test_each_forge_posts_to_its_own_webhook_url() -> None:
    served = {route.path: dict(route.arguments) for route in ROUTES if route.view == "webhooks.receive"}

    assert served == {f"/api/{provider}/webhook": {"provider": provider} for provider in WEBHOOK_PROVIDERS}


def test_a_push_to_main_reads_as_a_build_of_main_from_the_forges_with_a_push_event() -> None:
    sha = "a" * 40
    pushes = {
        "github": ({"x-github-event": "push"}, {"ref": "refs/heads/main", "after": sha}),
        "gitea": ({"x-gitea-event": "push"}, {"ref": "refs/heads/main", "after": sha}),
        "gitlab": ({}, {"object_kind": "push", "ref": "refs/heads/main", "checkout_sha": sha, "after": sha}),
        "git": ({}, {"ref": "refs/heads/main", "commitId": sha}),
    }

    events = {provider: read_event(provider, *pushes[provider]) for provider in pushes}

    assert set(pushes) <= set(WEBHOOK_PROVIDERS)
    assert {provider: (event.branch, event.ignored) for provider, event in events.items()} == {
        provider: ("main", None) for provider in pushes
    }
