"""Notifications: real builds and a deployment finish, the pump runs the notifications handler, and e-mails land in
the emulator's SES outbox by each user's preferences while webhook entries reach receivers on loopback."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from app import send_notifications
from chalicelib.config import settings
from chalicelib.domain.notifications.notifications import notify_build
from chalicelib.local.pump import SqsPump, sqs_event
from chalicelib.notify.notifiers.email import EmailFailed, send_email
from chalicelib.store import builds as build_store
from chalicelib.store import projects as project_store
from chalicelib.store.notifications import claim_build_notifications
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment, deploy, wait_for_deployment
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account, unique

WAIT_SECONDS = 20
# A build that fails when started with FAIL set, and keeps an artifact either way.
BUILD_LINES = (
    "build_script:",
    "  - mkdir -p out && echo built > out/app.txt",
    '  - test -z "$FAIL"',
    "artifacts:",
    "  - path: out/app.txt",
    "    name: app",
)


def outbox() -> list[Any]:
    """Every e-mail the emulator's SES has accepted (the emulator runs in this process)."""
    return list(ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages)


def subjects_to(address: str) -> list[str]:
    return [message.subject for message in outbox() if address in message.destinations.get("ToAddresses", [])]


def wait_for_subjects(address: str, count: int) -> list[str]:
    """The subjects of the e-mails sent to ``address`` once there are ``count`` of them."""
    deadline = time.monotonic() + WAIT_SECONDS
    while len(subjects := subjects_to(address)) < count:
        assert time.monotonic() < deadline, f"{address} got {subjects}, expected {count} e-mails"
        time.sleep(0.1)
    return subjects


def settle() -> None:
    """Long enough for a notification still on its way to land (to assert that none does)."""
    time.sleep(2)


def add_user(account: Account, **preferences: Any) -> str:
    """A new user of the account with these notification preferences; returns its e-mail."""
    email = f"{unique('user')}@team.example"
    user = account.add_user(email)
    full = account.api.get(f"/users/{user['userId']}").json["user"]
    body = {
        name: full[name]
        for name in (
            "userId",
            "fullName",
            "email",
            "roleId",
            "successfulBuildNotification",
            "failedBuildNotification",
            "notifyWhenBuildStatusChangedOnly",
            "successfulDeploymentNotification",
            "failedDeploymentNotification",
        )
    }
    reply = account.api.put("/users", {**body, "password": None, **preferences})
    assert reply.status == 204, reply.body
    return email


@pytest.fixture
def receivers() -> Iterator[tuple[WebhookReceiver, WebhookReceiver]]:
    """A receiver that answers 200 and one that answers 500."""
    with WebhookReceiver() as good, WebhookReceiver(status=500) as broken:
        yield good, broken


@pytest.fixture
def silent_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A URL whose server takes connections and never answers; webhooks wait one second for an answer."""
    monkeypatch.setattr("chalicelib.notify.delivery.TIMEOUT_SECONDS", 1.0)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # connections wait in the backlog, unanswered
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/silent"


def test_builds_email_each_user_by_preference(account: Account, git_server: GitServer, pump: SqsPump) -> None:
    mine = add_user(account, successfulBuildNotification="mine", failedBuildNotification="mine")
    silent = add_user(account, successfulBuildNotification="none", failedBuildNotification="off")
    failures = add_user(account, successfulBuildNotification="none", failedBuildNotification="all")
    changes = add_user(account, notifyWhenBuildStatusChangedOnly=True)
    project = BuildProject(
        account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)}, author=f"Mia Mine <{mine}>"
    )
    name = project.project["name"]

    first = project.run()
    second = project.run()
    third = project.run(environmentVariables={"FAIL": "1"})

    assert [first["status"], second["status"], third["status"]] == ["success", "success", "failed"]
    owner = wait_for_subjects(account.owner_email, 3)
    assert owner == [
        f"Build {name} {first['version']} completed",
        f"Build {name} {second['version']} completed",
        f"Build {name} {third['version']} failed",
    ]
    assert wait_for_subjects(mine, 3) == owner  # the commits are the user's
    assert wait_for_subjects(failures, 1) == [f"Build {name} {third['version']} failed"]
    # The first build of a branch is a change, the second is not, the failure is.
    assert wait_for_subjects(changes, 2) == [owner[0], owner[2]]
    settle()
    assert subjects_to(silent) == []
    assert len(subjects_to(failures)) == 1 and len(subjects_to(changes)) == 2
    body = next(m.body for m in outbox() if account.owner_email in m.destinations["ToAddresses"])
    for text in (name, first["version"], "master", "A change", "success", f"/build/{first['version']}"):
        assert text in body, body


def test_webhook_and_email_entries_of_the_configuration(
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    receivers: tuple[WebhookReceiver, WebhookReceiver],
    silent_url: str,
) -> None:
    good, broken = receivers
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    entry = {"provider": "Webhook", "settings": {"url": f"{good.url}/hook?token=abc"}}
    token = project.notification_token(entry, "X-Hook-Secret", "hook-secret")  # as the settings would show it
    ops = f"{unique('ops')}@ops.example"
    yml = appveyor_yml(
        *BUILD_LINES,
        "notifications:",
        "  - provider: Webhook",  # first, and failing: the others still get theirs
        f"    url: {broken.url}/broken",
        "  - provider: Webhook",  # a receiver that never answers: given up on after the timeout
        f"    url: {silent_url}",
        "  - provider: Webhook",
        f"    url: {good.url}/hook?token=abc",
        "    authorization: Bearer abc",
        "    headers:",
        "      X-Hook-Secret:",
        f"        secure: {token}",
        "    on_build_success: true",
        "    on_build_failure: true",
        "  - provider: Email",
        "    to:",
        f"      - {ops}",
        "    subject: 'Build {{status}}: {{projectName}} {{buildVersion}}'",
        "    on_build_failure: true",
    )
    project.repository.commit({"appveyor.yml": yml})

    build = project.run()
    failed = project.run(environmentVariables={"FAIL": "1"})

    assert (build["status"], failed["status"]) == ("success", "failed")
    deadline = time.monotonic() + WAIT_SECONDS
    while len(good.requests) < 2 or len(broken.requests) < 2:
        assert time.monotonic() < deadline, (good.requests, broken.requests)
        time.sleep(0.1)
    assert project.build(build["version"])["status"] == "success"  # the broken receiver changed nothing
    success, failure = sorted(good.requests, key=lambda request: request.json["eventData"]["buildId"])
    assert success.method == "POST" and success.path == "/hook?token=abc"
    assert success.headers["authorization"] == "Bearer abc"
    assert success.headers["x-hook-secret"] == "hook-secret"
    assert success.headers["content-type"] == "application/json"
    event = success.json
    assert event["eventName"] == "build_success"
    data = event["eventData"]
    assert (data["passed"], data["failed"], data["status"]) == (True, False, "Success")
    assert (data["buildId"], data["buildVersion"], data["branch"]) == (build["buildId"], build["version"], "master")
    assert data["projectName"] == project.project["name"] and data["commitMessage"] == "A change"
    [job] = data["jobs"]
    assert job["id"] == build["jobs"][0]["jobId"] and job["status"] == "Success"
    assert {"messages", "compilationMessages"} <= set(job)
    [artifact] = job["artifacts"]
    assert (artifact["fileName"], artifact["name"]) == ("out/app.txt", "app")
    assert artifact["url"] and artifact["permalink"].endswith(f"/api/buildjobs/{job['id']}/artifacts/out/app.txt")
    assert failure.json["eventName"] == "build_failure"
    assert (failure.json["eventData"]["passed"], failure.json["eventData"]["status"]) == (False, "Failed")
    # The Email entry fires on failures only, with its own subject template.
    assert wait_for_subjects(ops, 1) == [f"Build Failed: {project.project['name']} {failed['version']}"]
    assert len(wait_for_subjects(account.owner_email, 2)) == 2
    settle()
    assert len(subjects_to(ops)) == 1


def test_a_pull_request_build_emails_only_members_and_calls_no_webhook(
    account: Account, git_server: GitServer, pump: SqsPump, receivers: tuple[WebhookReceiver, WebhookReceiver]
) -> None:
    good, _ = receivers
    member = add_user(account)
    attacker = f"{unique('attacker')}@evil.example"
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    # A fork's pull request: its appveyor.yml names an outside address and a URL of its choosing.
    head = project.repository.commit(
        {
            "appveyor.yml": appveyor_yml(
                *BUILD_LINES,
                "notifications:",
                "  - provider: Email",
                f"    to: [{attacker}, {member}]",
                "    subject: 'From the pull request {{buildVersion}}'",
                "  - provider: Webhook",
                f"    url: {good.url}/pull-request",
            )
        },
        branch="feature",
    )
    project.repository.set_ref("refs/pull/7/head", head)
    sent_before = len(outbox())

    build = project.run(pullRequestId=7)

    assert build["status"] == "success" and build["pullRequestId"] == "7"
    entry = f"From the pull request {build['version']}"
    assert entry in wait_for_subjects(member, 2)  # a member named by the entry still gets it
    settle()
    assert subjects_to(attacker) == []
    recipients = {address for message in outbox()[sent_before:] for address in message.destinations["ToAddresses"]}
    assert recipients <= {account.owner_email, member}
    assert good.requests == []


def test_a_redelivered_message_sends_nothing_again(account: Account, git_server: GitServer, pump: SqsPump) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    build = project.run()
    wait_for_subjects(account.owner_email, 1)
    stored = build_store.get_build(build["projectId"], build["buildId"])
    assert stored is not None
    message = {"projectId": stored.project_id, "buildId": stored.build_id, "revision": stored.revision}
    arn = f"arn:aws:sqs:us-east-1:{DEFAULT_ACCOUNT_ID}:notifications"

    event = sqs_event(arn, [{"MessageId": "again", "ReceiptHandle": "again", "Body": json.dumps(message)}])
    send_notifications(event, None)
    owner = project_store.get_project_by_id(stored.account_id, stored.project_id)
    assert owner is not None
    sent_again = notify_build(owner, stored, stored.revision, time.monotonic() + WAIT_SECONDS)

    settle()
    assert len(subjects_to(account.owner_email)) == 1
    assert sent_again == 0
    assert claim_build_notifications(stored) is False  # the first finish's message claimed them


def test_an_email_ses_does_not_take_fails_saying_why_and_lands_nowhere() -> None:
    recipient = f"{unique('user')}@team.example"

    with pytest.raises(EmailFailed) as failed:
        send_email("nobody@unverified.example", recipient, "Build app 1.0.1 failed", "the body")
    send_email(settings().notification_sender, recipient, "Build app 1.0.2 completed", "the body")  # verified

    assert str(failed.value).startswith("MessageRejected: ")
    assert "the body" not in str(failed.value)
    assert subjects_to(recipient) == ["Build app 1.0.2 completed"]


def test_deployments_email_users_by_their_deployment_preferences(
    account: Account, git_server: GitServer, pump: SqsPump, receivers: tuple[WebhookReceiver, WebhookReceiver]
) -> None:
    good, _ = receivers
    silent = add_user(account, successfulDeploymentNotification="none", failedDeploymentNotification="none")
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD_LINES)})
    build = project.run()
    environment = add_environment(account, "Webhook", {"url": f"{good.url}/deploy"})

    reply = deploy(project, environment, build["version"])
    assert reply.status == 200, reply.body
    deployment = wait_for_deployment(account, reply.json["deploymentId"])

    assert deployment["status"] == "success"
    expected = f"Deployment of {project.project['name']} {build['version']} to {environment['name']} completed"
    assert expected in wait_for_subjects(account.owner_email, 2)
    assert len(wait_for_subjects(silent, 1)) == 1  # the build's e-mail: only deployments are off for this user
    settle()
    assert subjects_to(silent) == [f"Build {project.project['name']} {build['version']} completed"]
