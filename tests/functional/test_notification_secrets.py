"""A notifications entry's secrets go only to the receiver they were set for (issue 34, third review): a token is
bound to its entry's provider and to the settings naming where it sends (its url, a Slack channel, an e-mail's
addresses), so one moved into another entry, or left in an entry pointed elsewhere, decrypts nowhere and the entry
is not sent, its build saying why. Tokens stored before that binding are sent again after ``conveyor migrate``."""

from __future__ import annotations

import copy
import time
from dataclasses import replace
from typing import Any

from chalicelib.domain.configuration.yamlconfig import read_settings_yaml
from chalicelib.domain.migrations import migrate
from chalicelib.domain.notifications.notification_secrets import rebound_environment, rebound_project
from chalicelib.domain.shared import secrets
from chalicelib.local.pump import SqsPump
from chalicelib.store import environments as environment_store
from chalicelib.store import projects as project_store
from chalicelib.store.accounts import get_account_by_name
from tests.builds import POLL_SECONDS, WAIT_SECONDS, BuildProject, appveyor_yml
from tests.functional.test_chat_notifications import wait_for
from tests.functional.test_project_secrets import put_yaml, read_settings, read_yaml
from tests.functional.test_secret_binding import legacy_token
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account, add_project, assert_refused, unique

BUILD_LINES = ("build_script:", "  - echo hi")


def webhook(url: str, **headers: Any) -> dict[str, Any]:
    return {"provider": "Webhook", "settings": {"url": url, "headers": headers}, "onBuildSuccess": True}


def set_notifications(account: Account, project: dict[str, Any], notifications: list[dict[str, Any]]) -> Any:
    settings = read_settings(account, project)
    settings["configuration"]["notifications"] = notifications
    return account.api.put("/projects", settings)


def stored_notifications(account: Account, project: dict[str, Any]) -> list[dict[str, Any]]:
    notifications: list[dict[str, Any]] = read_settings(account, project)["configuration"]["notifications"]
    return notifications


def messages_of(project: BuildProject, build: dict[str, Any]) -> list[str]:
    """The build's messages once there are any: notifications are sent (or refused) after the build finished."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not (messages := project.build(build["version"])["messages"]) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    return [message["message"] for message in messages]


def test_a_token_copied_into_appveyor_yml_is_sent_to_its_receiver_and_not_from_an_entry_pointed_elsewhere(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    with WebhookReceiver() as receiver:
        hook = webhook(f"{receiver.url}/hook", **{"X-Hook-Secret": {"secure": "the-hook-secret"}})
        assert set_notifications(account, project.project, [hook]).status == 204
        token = stored_notifications(account, project.project)[0]["settings"]["headers"]["X-Hook-Secret"]["secure"]
        assert set_notifications(account, project.project, []).status == 204  # appveyor.yml holds the entries
        entry = ("    headers:", "      X-Hook-Secret:", f"        secure: {token}", "    on_build_success: true")
        yml = appveyor_yml(
            *BUILD_LINES,
            "notifications:",
            "  - provider: Webhook",  # first: were it sent, it would be before the second
            f"    url: {receiver.url}/elsewhere",
            *entry,
            "  - provider: Webhook",
            f"    url: {receiver.url}/hook",
            *entry,
        )
        project.repository.commit({"appveyor.yml": yml})

        build = project.run()

        assert build["status"] == "success", build
        [received] = wait_for(receiver, 1)
    assert (received.path, received.headers["x-hook-secret"]) == ("/hook", "the-hook-secret")
    assert messages_of(project, build) == [
        "Notification 1 (Webhook) was not sent: its secure X-Hook-Secret is not a secret this project set for this "
        "provider and receiver (a token works only in an entry that sends where it was set for: set the entry in "
        "the project's settings and copy the token they show)."
    ]


def test_a_project_updater_cannot_point_a_stored_notification_token_at_their_own_url(account: Account) -> None:
    project = add_project(account, unique("octo/hooks"))
    hook = webhook("https://hooks.example.com/build", Authorization={"secure": "Bearer the-receivers-key"})
    assert set_notifications(account, project, [hook]).status == 204
    settings = read_settings(account, project)
    moved = copy.deepcopy(settings)
    moved["configuration"]["notifications"][0]["settings"]["url"] = "https://collect.example.net/hook"  # token kept

    reply = account.api.put("/projects", moved)

    assert_refused(reply, 400)
    assert "a secure value works only where it was set" in reply.json["message"]
    assert stored_notifications(account, project)[0]["settings"]["url"] == "https://hooks.example.com/build"


def test_a_project_updater_cannot_hide_a_webhooks_url_beside_its_secrets(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    # a secure url is no part of what the entry's secrets are bound to: set beside a stored token, it would take the
    # token to a receiver of the updater's
    project = BuildProject(account, git_server, {"README.md": "no appveyor.yml: the project's settings build"})
    hidden = webhook({"secure": "https://collect.example.net/hook"}, Authorization={"secure": "Bearer the-key"})

    reply = set_notifications(account, project.project, [hidden])

    assert_refused(reply, 400)
    assert "url is secure beside other secure settings" in reply.json["message"]
    # one stored so (as a token of each, before the binding) is not sent, and its builds say why
    with WebhookReceiver() as receiver:
        url = project.notification_token({"provider": "Webhook"}, "url", f"{receiver.url}/hook")
        key = project.notification_token({"provider": "Webhook"}, "Authorization", "Bearer the-key")
        _store(project, [webhook({"secure": url}, Authorization={"secure": key})])
        build = project.run()
        assert build["status"] == "success", build
        assert receiver.requests == []
    assert messages_of(project, build) == [
        "Notification 1 (Webhook) was not sent: its url is secure beside other secure settings: write where it "
        "sends in plain text."
    ]


def test_notification_secrets_stored_before_their_binding_are_sent_after_the_migration(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"README.md": "no appveyor.yml: the project's settings build"})
    project.repository.commit({"README.md": "release"}, branch="release")
    owner = secrets.Owner(project.project["accountId"], "project", project.project["projectId"])
    environment = _environment_with_a_notification_secret(account)
    with WebhookReceiver() as receiver:
        # settings YAML kept as written: an entry for every branch, another for the release branch's builds
        text = appveyor_yml(
            *BUILD_LINES,
            *_notifications("", receiver, "main", secrets.encrypt(owner, "notification/X-Hook-Secret", "main-secret")),
            "for:",
            "  - branches:",
            "      only:",
            "        - release",
            *_notifications("    ", receiver, "release", secrets.encrypt(owner, "notification/X-Hook-Secret", "r-s")),
        )
        stored = project_store.get_project_by_id(project.project["accountId"], project.project["projectId"])
        assert stored is not None
        configuration, _ = read_settings_yaml(text, "")
        project_store.save_settings(stored, replace(stored, configuration=configuration, settings_yaml=text))

        changed = migrate()["notification secrets' binding"]
        again = migrate()["notification secrets' binding"]
        main, release = project.run(), project.run(branch="release")

        assert changed >= 2 and again == 0  # the project and the environment
        assert (main["status"], release["status"]) == ("success", "success")
        received = wait_for(receiver, 2)
    assert sorted((request.path, request.headers["x-hook-secret"]) for request in received) == [
        ("/main", "main-secret"),
        ("/release", "r-s"),
    ]
    assert put_yaml(account, project.project, read_yaml(account, project.project)).status == 204  # kept as read
    after = environment_store.get_environment(environment.account_id, environment.environment_id)
    assert after is not None
    migrated = project_store.get_project_by_id(project.project["accountId"], project.project["projectId"])
    assert migrated is not None
    assert (rebound_project(migrated), rebound_environment(after)) == (None, None)  # nothing left to bind again
    [(holder, key, field)] = secrets.secret_fields(after.settings)
    assert field.endswith("@webhook:url=https://hooks.example.com/deploys")
    assert secrets.decrypt(secrets.environment_owner(after), field, holder[key]) == "the-deploy-hook-secret"


def _notifications(indent: str, receiver: WebhookReceiver, path: str, token: str) -> tuple[str, ...]:
    return tuple(
        indent + line
        for line in (
            "notifications:",
            "  - provider: Webhook",
            f"    url: {receiver.url}/{path}",
            "    headers:",
            "      X-Hook-Secret:",
            f"        secure: {token}",
            "    on_build_success: true",
        )
    )


def _environment_with_a_notification_secret(account: Account) -> Any:
    """An environment whose notification's token was made before the binding (to its key alone)."""
    body = {
        "name": unique("env"),
        "provider": "Webhook",
        "settings": {"providerSettings": [], "environmentVariables": []},
    }
    reply = account.api.post("/environments", body)
    assert reply.status == 200, reply.body
    found = get_account_by_name(account.name)
    assert found is not None
    stored = environment_store.get_environment(found.account_id, reply.json["deploymentEnvironmentId"])
    assert stored is not None
    token = secrets.encrypt(secrets.environment_owner(stored), "notification/X-Secret", "the-deploy-hook-secret")
    entry = webhook("https://hooks.example.com/deploys", **{"X-Secret": {"secure": token}})
    assert environment_store.rewrite_settings(stored, {**stored.settings, "notifications": [entry]})
    return replace(stored, revision=stored.revision + 1)


def _store(project: BuildProject, notifications: list[dict[str, Any]]) -> None:
    """Entries stored as they were before such entries were refused."""
    stored = project_store.get_project_by_id(project.project["accountId"], project.project["projectId"])
    assert stored is not None
    configuration = {**stored.configuration, "notifications": notifications}
    project_store.save_settings(stored, replace(stored, configuration=configuration))


def test_a_legacy_notification_token_is_sent_from_the_entry_it_is_stored_in_before_and_after_the_migration(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    # a cvy1: token (bound to the account alone) is accepted at the field it is stored at: its own entry's header
    project = BuildProject(account, git_server, {"README.md": "no appveyor.yml: the project's settings build"})
    old = legacy_token(project.project["accountId"], "old-hook-secret")
    with WebhookReceiver() as receiver:
        _store(project, [webhook(f"{receiver.url}/hook", **{"X-Hook-Secret": {"secure": old}})])
        before = project.run()
        wait_for(receiver, 1)
        migrate()
        after = project.run()
        received = wait_for(receiver, 2)
    assert (before["status"], after["status"]) == ("success", "success")
    assert [request.headers["x-hook-secret"] for request in received] == ["old-hook-secret", "old-hook-secret"]
    token = stored_notifications(account, project.project)[0]["settings"]["headers"]["X-Hook-Secret"]["secure"]
    assert token.startswith(secrets.TOKEN_PREFIX)  # bound to its entry by the migration
