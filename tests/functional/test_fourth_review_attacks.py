"""Attacks on the fourth review's change (issue 34/35/37): each test is named for the attack it tries."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from chalicelib.local.pump import SqsPump
from chalicelib.store import projects as project_store
from tests.builds import WAIT_SECONDS, BuildProject, appveyor_yml
from tests.functional.test_chat_notifications import last_entry
from tests.functional.test_notification_secrets import messages_of, set_notifications, stored_notifications, webhook
from tests.functional.test_secret_binding import account_id_of, legacy_token, store_variables_as_before
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account

BUILD_LINES = ("build_script:", "  - echo hi")


def _hook_entry(url: str, token: str) -> tuple[str, ...]:
    return (
        "  - provider: Webhook",
        f"    url: {url}",
        "    headers:",
        "      X-Hook-Secret:",
        f"        secure: {token}",
        "    on_build_success: true",
    )


def test_a_pusher_cannot_take_a_notification_secret_to_a_url_differing_only_in_case(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    # a URL's path is case-sensitive: /Team-A and /team-a are two receivers (two topics, two jobs of a shared
    # server), so a token set for one must not be sent to the other
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    with WebhookReceiver() as receiver:
        hook: dict[str, Any] = webhook(f"{receiver.url}/Team-A", **{"X-Hook-Secret": {"secure": "team-a-secret"}})
        assert set_notifications(account, project.project, [hook]).status == 204
        token = stored_notifications(account, project.project)[0]["settings"]["headers"]["X-Hook-Secret"]["secure"]
        assert set_notifications(account, project.project, []).status == 204  # appveyor.yml holds the entries
        moved = _hook_entry(f"{receiver.url}/team-a", token)
        yml = appveyor_yml(*BUILD_LINES, "notifications:", *moved, *last_entry(receiver), "    on_build_success: true")
        project.repository.commit({"appveyor.yml": yml})

        build = project.run()

        assert build["status"] == "success", build
        _wait_for_path(receiver, "/last")  # sent after the first entry, had it been sent
    assert [(request.path, request.headers.get("x-hook-secret")) for request in receiver.requests] == [("/last", None)]
    [message] = messages_of(project, build)
    assert message.startswith("Notification 1 (Webhook) was not sent: its secure X-Hook-Secret is not a secret")


def _wait_for_path(receiver: WebhookReceiver, path: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while path not in [request.path for request in receiver.requests]:
        assert time.monotonic() < deadline, f"{receiver.requests} after {WAIT_SECONDS} s, expected {path}"
        time.sleep(0.1)


def _push_a_header_aimed_at_mine(project: BuildProject, token: str, plain: str) -> dict[str, Any]:
    """Push an appveyor.yml whose first Webhook entry sends ``token`` as its secure header to the pusher's own
    /mine, then a plain entry to /last; the build, once /last was reached and /mine was not, ``plain`` nowhere."""
    with WebhookReceiver() as receiver:
        hooks = (*_hook_entry(f"{receiver.url}/mine", token), *last_entry(receiver), "    on_build_success: true")
        project.repository.commit({"appveyor.yml": appveyor_yml(*BUILD_LINES, "notifications:", *hooks)})

        build = project.run()

        assert build["status"] == "success", build
        _wait_for_path(receiver, "/last")
    assert [(request.path, request.headers.get("x-hook-secret")) for request in receiver.requests] == [("/last", None)]
    assert all(plain not in request.body.decode() for request in receiver.requests)
    return build


def test_a_pusher_cannot_send_an_old_variable_token_through_a_notification_header(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    # a cvy1: token (bound to the account only, made before secrets were bound to their field) is accepted where it
    # is stored: as the project's variable DB_PASSWORD, not as the secure header of an entry aimed at a pusher's server
    old = legacy_token(account_id_of(account), "old-database-password")
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    store_variables_as_before(project.project, [{"name": "DB_PASSWORD", "value": {"isEncrypted": True, "value": old}}])

    build = _push_a_header_aimed_at_mine(project, old, "old-database-password")

    [message] = messages_of(project, build)
    assert message.startswith("Notification 1 (Webhook) was not sent: its secure X-Hook-Secret is not a secret")


def test_a_pusher_cannot_send_an_old_webhook_secret_token_through_a_notification_header(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    stored = project_store.get_project(project.project["accountId"], project.project["slug"])
    assert stored is not None
    old = legacy_token(stored.account_id, "old-webhook-secret")
    project_store.save_settings(stored, replace(stored, webhook_secret=old))

    build = _push_a_header_aimed_at_mine(project, old, "old-webhook-secret")

    [message] = messages_of(project, build)
    assert message.startswith("Notification 1 (Webhook) was not sent: its secure X-Hook-Secret is not a secret")
