"""Attacks on the fourth review's change (issue 34/35/37): each test is named for the attack it tries."""

from __future__ import annotations

import time
from typing import Any

from chalicelib.local.pump import SqsPump
from tests.builds import WAIT_SECONDS, BuildProject, appveyor_yml
from tests.functional.test_chat_notifications import last_entry
from tests.functional.test_notification_secrets import messages_of, set_notifications, stored_notifications, webhook
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
