"""Slack and Microsoft Teams notifications: real builds finish, the pump runs the notifications handler, and
receivers on loopback stand in for Slack's incoming webhooks, its chat.postMessage API and a Teams channel.

Every configuration below ends with a Webhook entry to a "last" receiver: notices go out one after another, in
the configuration's order, so once the last receiver has a build's request, every earlier entry's has been sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from chalicelib.local.pump import SqsPump
from chalicelib.store import projects as project_store
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.peers import ReceivedRequest, WebhookReceiver
from tests.support import Account, assert_refused, project_path

WAIT_SECONDS = 30
BUILD_LINES = ("build_script:", '  - test -z "$FAIL"')
SLACK_PATH = "/services/T0CONVEY/B0CONVEY/slack-hook-key-3f9a"  # a Slack webhook's path is its key
TEAMS_PATH = "/workflows/conveyor/triggers/manual?sig=teams-key-77c1"
TEMPLATE = "{{#passed}}passed{{/passed}}{{#failed}}failed{{/failed}}: {{projectName}} {{buildVersion}}, {{message}}"


@pytest.fixture
def receivers() -> Iterator[tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver]]:
    """Chat webhooks (Slack's and Teams'), Slack's API (answering ok), and the last entry's receiver."""
    with WebhookReceiver() as hooks, WebhookReceiver(answer={"ok": True}) as slack_api, WebhookReceiver() as last:
        yield hooks, slack_api, last


def wait_for(receiver: WebhookReceiver, count: int) -> list[ReceivedRequest]:
    deadline = time.monotonic() + WAIT_SECONDS
    while len(receiver.requests) < count:
        assert time.monotonic() < deadline, f"{receiver.requests} after {WAIT_SECONDS} s, expected {count}"
        time.sleep(0.1)
    return receiver.requests


def secure(project: BuildProject, provider: str, key: str, plain: str, **destination: str) -> str:
    """The token the project's settings would show for a secure setting ``key`` of a ``provider`` entry sending to
    ``destination`` (its plain destination settings: a channel)."""
    return project.notification_token({"provider": provider, "settings": destination}, key, plain)


def last_entry(receiver: WebhookReceiver) -> tuple[str, ...]:
    return ("  - provider: Webhook", f"    url: {receiver.url}/last")


def test_slack_and_teams_entries_post_once_per_finished_build_by_their_triggers(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hooks, slack_api, last = receivers
    monkeypatch.setenv("CONVEYOR_SLACK_API_URL", f"{slack_api.url}/api")
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    yml = appveyor_yml(
        *BUILD_LINES,
        "notifications:",
        "  - provider: Slack",  # no trigger: success, failure and change
        "    incoming_webhook:",
        f"      secure: {secure(project, 'Slack', 'incoming_webhook', hooks.url + SLACK_PATH)}",
        f"    template: '{TEMPLATE}'",
        "  - provider: Slack",
        "    auth_token:",
        f"      secure: {secure(project, 'Slack', 'auth_token', 'xoxb-conveyor-test', channel='#builds')}",
        "    channel: '#builds'",
        "    on_build_success: true",
        "  - provider: MicrosoftTeams",
        "    incoming_webhook:",
        f"      secure: {secure(project, 'MicrosoftTeams', 'incoming_webhook', hooks.url + TEAMS_PATH)}",
        "    on_build_failure: true",
        *last_entry(last),
    )
    project.repository.commit({"appveyor.yml": yml}, message="Fix <b> & co")

    passed = project.run()
    failed = project.run(environmentVariables={"FAIL": "1"})

    assert (passed["status"], failed["status"]) == ("success", "failed")
    wait_for(last, 2)
    slack = [request for request in hooks.requests if request.path == SLACK_PATH]
    teams = [request for request in hooks.requests if request.path == TEAMS_PATH]
    name = project.project["name"]
    # Values are escaped as Slack's text needs: the commit message's <, > and &.
    assert sorted((request.json for request in slack), key=lambda message: message["text"]) == [
        {"text": f"failed: {name} {failed['version']}, Fix &lt;b&gt; &amp; co"},
        {"text": f"passed: {name} {passed['version']}, Fix &lt;b&gt; &amp; co"},
    ]
    assert all(request.method == "POST" and "json" in request.headers["content-type"] for request in slack)
    [posted] = slack_api.requests  # on_build_success only: the passed build
    assert posted.path == "/api/chat.postMessage"
    assert posted.headers["authorization"] == "Bearer xoxb-conveyor-test"
    assert posted.json["channel"] == "#builds"
    text = posted.json["text"]
    assert text.startswith(":white_check_mark: <") and f"|Build {name} {passed['version']} Success>" in text
    assert "Branch master, commit " in text and "_Fix &lt;b&gt; &amp; co_" in text
    [card] = teams  # on_build_failure only: the failed build
    assert card.json["type"] == "message"
    [attachment] = card.json["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    content = attachment["content"]
    assert (content["type"], content["version"]) == ("AdaptiveCard", "1.4")
    title, body = content["body"]
    assert (title["text"], title["color"]) == (f"Build {name} {failed['version']} failed", "Attention")
    assert body["text"].startswith("Branch master, commit ") and body["text"].endswith("Fix <b> & co")


def test_a_failing_chat_receiver_changes_nothing_and_no_webhook_url_or_token_is_shown(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    hooks, slack_api, last = receivers
    hooks.status = 500
    slack_api.answer = {"ok": False, "error": "channel_not_found"}  # Slack's way: 200, and ok false
    monkeypatch.setenv("CONVEYOR_SLACK_API_URL", f"{slack_api.url}/api")
    caplog.set_level(logging.INFO)
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES, *_notify(last))})
    # The project's own entries, written in plain text: stored as secure values, merged with the file's.
    settings_yaml = (
        "notifications:\n"
        f"  - provider: Slack\n    incoming_webhook: {hooks.url}{SLACK_PATH}\n"
        "  - provider: Slack\n    auth_token: xoxb-conveyor-secret\n    channel: builds\n"
        f"  - provider: MicrosoftTeams\n    incoming_webhook: '{hooks.url}{TEAMS_PATH}'\n"
    )
    yaml_path = project_path(project.project) + "/settings/yaml"
    reply = account.api.put(yaml_path, raw=settings_yaml.encode(), headers={"Content-Type": "text/plain"})
    assert reply.status == 204, reply.body

    build = project.run()

    wait_for(last, 1)
    assert [request.path for request in hooks.requests] == [SLACK_PATH, TEAMS_PATH]
    assert len(slack_api.requests) == 1
    shown = project.build(build["version"])
    assert shown["status"] == "success" and shown["messages"] == []  # the failures changed nothing of the build
    paths = [project.path, f"{project.path}/settings", yaml_path, f"{project.path}/build/{build['version']}"]
    shown_anywhere = [account.api.get(path).body.decode() for path in paths] + [project.log(build["jobs"][0]["jobId"])]
    logged = caplog.text
    for secret in ("slack-hook-key", "teams-key", "xoxb-conveyor-secret"):
        assert secret not in logged
        assert not [text for text in shown_anywhere if secret in text], secret
    assert "secure: cvy" in account.api.get(yaml_path).body.decode()
    assert f"{hooks.url} answered 500" in logged
    assert "chat.postMessage refused the message: channel_not_found" in logged


def _notify(last: WebhookReceiver) -> tuple[str, ...]:
    return ("notifications:", *last_entry(last))


def test_a_settings_document_with_a_provider_conveyor_does_not_send_is_taken_and_its_builds_name_the_entry(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver],
) -> None:
    _, _, last = receivers
    project = BuildProject(account, git_server, {"README.md": "no appveyor.yml: the project's settings build it\n"})
    yaml_path = project_path(project.project) + "/settings/yaml"
    copied = appveyor_yml(
        *BUILD_LINES,
        "notifications:",
        "  - provider: GitHubPullRequest",
        "    auth_token: ghp_never-sent-0123456789",
        *last_entry(last),
    )

    reply = account.api.put(yaml_path, raw=copied.encode(), headers={"Content-Type": "text/plain"})

    assert reply.status == 204, reply.body
    saved = account.api.get(yaml_path).body.decode()
    assert "provider: GitHubPullRequest" in saved and f"url: {last.url}/last" in saved
    assert "ghp_never-sent" not in saved and "auth_token:\n      secure: " in saved  # a token is kept encrypted
    build = project.run()
    assert build["status"] == "success"
    wait_for(last, 1)  # the rest of the document is honoured: its webhook entry is sent
    messages = [message["message"] for message in project.build(build["version"])["messages"]]
    assert messages == [
        "Notification 1 (GitHubPullRequest) was not sent: GitHubPullRequest notifications are not supported: "
        "Conveyor posts the build's state to its commit instead (docs/forges.md)."
    ]
    settings = account.api.get(project_path(project.project) + "/settings").json["settings"]
    settings["configuration"]["notifications"].append({"provider": "Campfire", "settings": {"room": "builds"}})
    assert account.api.put("/projects", settings).status == 204  # the JSON settings take it alike


def test_a_repository_entry_conveyor_does_not_send_leaves_its_builds_to_run_and_they_name_it(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver],
) -> None:
    hooks, _, last = receivers
    # Common in AppVeyor files: GitHubPullRequest, and a Slack entry Conveyor cannot send (a misspelt key).
    unsent = ("  - provider: GitHubPullRequest", "  - provider: Slack", f"    incoming_webhok: {hooks.url}/slack")
    yml = appveyor_yml(*BUILD_LINES, "notifications:", *unsent, *last_entry(last))
    project = BuildProject(account, git_server, {"appveyor.yml": yml})

    build = project.run()

    assert build["status"] == "success"
    wait_for(last, 1)
    assert hooks.requests == []
    messages = [message["message"] for message in project.build(build["version"])["messages"]]
    assert messages == [
        "Notification 1 (GitHubPullRequest) was not sent: GitHubPullRequest notifications are not supported: "
        "Conveyor posts the build's state to its commit instead (docs/forges.md).",
        "Notification 2 (Slack) was not sent: unknown Slack setting incoming_webhok; "
        "expected one of incoming_webhook, auth_token, channel, template.",
    ]


OLD_ENTRIES: list[dict[str, Any]] = [
    {"provider": "HipChat", "settings": {"room": "builds"}},
    {"provider": "Slack", "settings": {"channel": "builds"}},  # neither a webhook nor a token
]


def store_notifications(project: BuildProject, notifications: list[dict[str, Any]]) -> None:
    """Entries saved before Conveyor refused them, stored as they were."""
    stored = project_store.get_project_by_id(project.project["accountId"], project.project["projectId"])
    assert stored is not None
    configuration = {**stored.configuration, "notifications": notifications}
    project_store.save_settings(stored, replace(stored, configuration=configuration))


def stored_providers(project: BuildProject) -> list[str]:
    stored = project_store.get_project_by_id(project.project["accountId"], project.project["projectId"])
    assert stored is not None
    return [entry["provider"] for entry in stored.configuration["notifications"]]


def test_stored_entries_it_no_longer_takes_come_back_unchanged_through_the_settings_and_their_yaml(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    store_notifications(project, OLD_ENTRIES)
    settings_path, yaml_path = f"{project.path}/settings", f"{project.path}/settings/yaml"

    # What a GET shows, put back with another change: the old entries pass as they are.
    settings = account.api.get(settings_path).json["settings"]
    settings["configuration"]["installScripts"] = [{"script": "echo json", "language": "cmd"}]
    reply = account.api.put("/projects", settings)
    assert reply.status == 204, reply.body
    assert stored_providers(project) == ["HipChat", "Slack"]
    text = account.api.get(yaml_path).body.decode()
    assert "provider: HipChat" in text
    reply = account.api.put(
        yaml_path, raw=f"{text}\ninit: echo yaml\n".encode(), headers={"Content-Type": "text/plain"}
    )
    assert reply.status == 204, reply.body
    assert stored_providers(project) == ["HipChat", "Slack"]
    assert "echo yaml" in account.api.get(yaml_path).body.decode()

    # A new entry of a provider Conveyor sends, or a stored one changed, that it could not send as written is
    # refused by name, and nothing changes (one of a provider it does not send at all is taken: its builds name it).
    before = account.api.get(yaml_path).body
    settings = account.api.get(settings_path).json["settings"]
    settings["configuration"]["notifications"][1]["settings"]["channel"] = "releases"
    message = assert_refused(account.api.put("/projects", settings), 400)
    assert "notifications[1]: a Slack entry needs incoming_webhook, or auth_token with channel" in message
    assert account.api.get(yaml_path).body == before


def test_an_entry_stored_before_it_was_refused_says_why_it_was_not_sent(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver],
) -> None:
    hooks, _, last = receivers
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES, *_notify(last))})
    store_notifications(project, OLD_ENTRIES)

    build = project.run()

    wait_for(last, 1)
    assert hooks.requests == []
    messages = [message["message"] for message in project.build(build["version"])["messages"]]
    assert messages == [
        "Notification 1 (HipChat) was not sent: HipChat notifications are not supported: "
        "HipChat was shut down in 2019.",
        "Notification 2 (Slack) was not sent: a Slack entry needs incoming_webhook, or auth_token with channel.",
    ]
    # nor does it stand in the way of a change of the variables, which leaves the stored entries as they were
    variables = [{"name": "STAGE", "value": {"isEncrypted": False, "value": "blue"}}]
    assert account.api.put(f"{project.path}/settings/environment-variables", variables).status == 204
    kept = project_store.get_project_by_id(project.project["accountId"], project.project["projectId"])
    assert kept is not None and kept.configuration["notifications"] == OLD_ENTRIES


def test_a_pull_request_build_posts_to_no_chat_and_says_so(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver, WebhookReceiver],
) -> None:
    hooks, _, _ = receivers
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    # A fork's pull request: its appveyor.yml names a channel of its author's choosing.
    chat = ("notifications:", "  - provider: MicrosoftTeams", f"    incoming_webhook: {hooks.url}/pull-request")
    head = project.repository.commit({"appveyor.yml": appveyor_yml(*BUILD_LINES, *chat)}, branch="feature")
    project.repository.set_ref("refs/pull/7/head", head)

    build = project.run(pullRequestId=7)

    expected = (
        "Notification 1 (MicrosoftTeams) was not sent: "
        "a pull request's build sends only e-mails to the account's users."
    )
    deadline = time.monotonic() + WAIT_SECONDS
    while expected not in [message["message"] for message in project.build(build["version"])["messages"]]:
        assert time.monotonic() < deadline, project.build(build["version"])["messages"]
        time.sleep(0.1)
    assert hooks.requests == []
