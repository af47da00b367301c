"""Messages that must follow a write survive a failed send (domain/shared/outbox.py): SQS breaks between the write and
the send, the write stands, and the sweeper sends the message again, so the job runs, the deployment is delivered,
the notifications go. Nothing owed is sent twice, and nothing sent is owed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from chalice.app import SQSEvent

from chalicelib.core.messages import AgentDeadline, Announce, Message, RunDeploymentJob, RunJob, body_of
from chalicelib.domain import announcements
from chalicelib.domain.shared.outbox import UNSENT_SECONDS, resend_owed
from chalicelib.local.pump import SqsPump, sqs_event
from chalicelib.store import jobs as job_store
from chalicelib.store import outbox as outbox_store
from chalicelib.store import queues
from chalicelib.store.delivery_models import OutboxModel
from chalicelib.store.outbox import Owed
from chalicelib.store.transactions import atomically
from chalicelib.workers.notifications import abandon_notifications, send_notifications
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment, deploy, wait_for_deployment
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account

SIMPLE = {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")}


def later() -> float:
    """The sweeper's clock once a message has been owed long enough to be sent again."""
    return time.time() + UNSENT_SECONDS + 1


class BrokenSqs:
    """SQS refusing the sends of some kinds of message, as a failing SendMessageBatch does; others go through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *kinds: type) -> None:
        self.refused: list[Message] = []
        self.kinds = kinds
        real = queues.send

        def send(messages: Sequence[Message], delay_seconds: int = 0) -> None:
            if any(isinstance(message, kinds) for message in messages):
                self.refused += messages
                raise queues.SendFailed(f"{len(messages)} messages were not queued: ServiceUnavailable")
            real(messages, delay_seconds)

        monkeypatch.setattr(queues, "send", send)

    def wait_for_a_refusal(self, seconds: float = 10) -> None:
        """Until a send of the refused kinds has failed: a build is shown finished as soon as its status is written,
        a moment before its announcement is sent."""
        deadline = time.monotonic() + seconds
        while not any(isinstance(message, self.kinds) for message in self.refused):
            assert time.monotonic() < deadline, "no refused message was sent"
            time.sleep(0.05)


def notifying_project(account: Account, git_server: GitServer, receiver: WebhookReceiver) -> BuildProject:
    """A project whose builds send a webhook notification to ``receiver``."""
    lines = (
        "build_script:",
        "  - echo ran",
        "notifications:",
        "  - provider: Webhook",
        f"    url: {receiver.url}/hook",
    )
    return BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*lines)})


def wait_for_a_request(receiver: WebhookReceiver, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not receiver.requests:
        assert time.monotonic() < deadline, "the notification never came"
        time.sleep(0.1)


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def test_a_build_whose_job_message_was_lost_runs_once_the_sweeper_sends_it_again(
    account: Account, git_server: GitServer, pump: SqsPump, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, SIMPLE)

    sqs = BrokenSqs(monkeypatch, RunJob)  # SQS fails between the build's write and its send
    queued = project.start()
    monkeypatch.undo()
    time.sleep(1)
    waiting = project.build(queued["version"])

    resent = resend_owed(now=later())
    build = project.wait(queued["version"])

    job_id = waiting["jobs"][0]["jobId"]
    assert [message.job_id for message in sqs.refused if isinstance(message, RunJob)] == [job_id]
    assert queued["status"] == "queued" and waiting["status"] == "queued"  # answered, stored, but nothing runs it
    assert RunJob(job_id) in resent
    assert build["status"] == "success"
    assert RunJob(job_id) not in resend_owed(now=later())  # a claimed job is never sent again


def test_a_deployment_whose_message_was_lost_is_delivered_once_the_sweeper_sends_it_again(
    built: tuple[BuildProject, dict[str, Any]], receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build = built
    environment = add_environment(project.account, "Webhook", {"url": f"{receiver.url}/deployed"})

    sqs = BrokenSqs(monkeypatch, RunDeploymentJob)
    started = deploy(project, environment, build["version"])
    monkeypatch.undo()
    time.sleep(1)
    waiting = project.account.api.get(f"/deployments/{started.json['deploymentId']}").json["deployment"]

    resent = resend_owed(now=later())
    deployment = wait_for_deployment(project.account, started.json["deploymentId"])

    job_id = waiting["jobs"][0]["jobId"]
    assert started.status == 200 and sqs.refused == [RunDeploymentJob(job_id)]
    assert waiting["status"] == "queued" and RunDeploymentJob(job_id) in resent
    assert deployment["status"] == "success" and [request.path for request in receiver.requests] == ["/deployed"]
    assert RunDeploymentJob(job_id) not in resend_owed(now=later())


def test_an_agent_deployment_whose_deadline_message_was_lost_still_fails_when_no_agent_takes_it(
    built: tuple[BuildProject, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "5"})

    sqs = BrokenSqs(monkeypatch, AgentDeadline)
    started = deploy(project, environment, build["version"])
    monkeypatch.undo()
    deployment_id = started.json["deploymentId"]
    early = resend_owed(now=time.time() + 5 + UNSENT_SECONDS - 30)  # not due yet: no agent had its time

    resent = resend_owed(now=time.time() + 5 + UNSENT_SECONDS + 1)
    deployment = wait_for_deployment(project.account, deployment_id, seconds=30)

    job_id = deployment["jobs"][0]["jobId"]
    assert sqs.refused == [AgentDeadline(job_id)]
    assert AgentDeadline(job_id) not in early and AgentDeadline(job_id) in resent
    assert deployment["status"] == "failed"


def test_the_notifications_of_a_build_whose_announcement_was_lost_go_out_once_the_sweeper_sends_it(
    account: Account, git_server: GitServer, pump: SqsPump, receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = notifying_project(account, git_server, receiver)

    sqs = BrokenSqs(monkeypatch, Announce)  # the build's final write stands, its notifications' send fails
    build = project.run()
    sqs.wait_for_a_refusal()
    monkeypatch.undo()
    time.sleep(2)
    before = list(receiver.requests)
    owed = [message for _, message in outbox_store.owed_before(later())]

    resent = resend_owed(now=later())
    wait_for_a_request(receiver)
    time.sleep(1)

    announced = [message for message in sqs.refused if isinstance(message, Announce)]
    assert build["status"] == "success" and before == []
    assert [message.build_id for message in announced] == [build["buildId"]] and announced[0] in owed
    assert announced[0] in resent
    assert [request.json["eventData"]["buildId"] for request in receiver.requests] == [build["buildId"]]
    assert announced[0] not in resend_owed(now=later())  # forgotten once sent


def test_an_outbox_entry_no_version_can_read_is_dropped_and_the_others_are_still_sent(
    account: Account, git_server: GitServer, pump: SqsPump, receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = notifying_project(account, git_server, receiver)
    OutboxModel("owed#3", "0000000001#3", body={"kind": "FromANewerVersion"}).save()
    sqs = BrokenSqs(monkeypatch, Announce)
    build = project.run()
    sqs.wait_for_a_refusal()
    monkeypatch.undo()

    resent = resend_owed(now=later())
    wait_for_a_request(receiver)

    assert [message.build_id for message in sqs.refused if isinstance(message, Announce)] == [build["buildId"]]
    assert [message.build_id for message in resent if isinstance(message, Announce)] == [build["buildId"]]
    assert all(message_id != "0000000001#3" for message_id, _ in outbox_store.owed_before(later()))


def test_a_sent_announcement_is_not_left_owed(
    account: Account, git_server: GitServer, pump: SqsPump, receiver: WebhookReceiver
) -> None:
    project = notifying_project(account, git_server, receiver)

    build = project.run()
    wait_for_a_request(receiver)  # sent: the finishing write stood before the send, and the forgetting follows it

    def owed() -> list[Message | None]:
        return [
            message
            for _, message in outbox_store.owed_before(later())
            if isinstance(message, Announce) and message.build_id == build["buildId"]
        ]

    deadline = time.monotonic() + 10
    while owed() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert build["status"] == "success"
    assert owed() == []


def test_a_job_whose_message_was_just_sent_is_not_sent_again(account: Account, git_server: GitServer) -> None:
    project = BuildProject(account, git_server, SIMPLE)

    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]

    assert RunJob(job_id) not in resend_owed()  # sent a moment ago: a runner may well be about to claim it


def test_a_job_deleted_before_its_message_is_sent_again_is_left_deleted(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, SIMPLE)
    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    assert account.api.delete(project.path).status == 204  # the project, its builds and jobs go

    assert job_store.note_resent(job_id) is False
    assert job_store.get_job(job_id) is None  # no stray item made of its id


def _notifications_event(message: Announce) -> SQSEvent:
    """The notifications queue's event for ``message``, as Lambda hands it to the handler."""
    body = json.dumps(body_of(message))
    received = {"MessageId": "m-1", "ReceiptHandle": "r-1", "Body": body}
    return SQSEvent(sqs_event("arn:aws:sqs:us-east-1:123456789012:notifications", [received]), None)


def _owed_announcement(build_id: int) -> Owed:
    """An announcement recorded in the outbox as a build's finishing write records it."""
    owed = outbox_store.owe(Announce(1, 2, build_id=build_id))
    with atomically("unused") as transaction:
        outbox_store.record(transaction, owed)
    return owed


def _still_owed(owed: Owed) -> bool:
    return any(message_id == owed.message_id for message_id, _ in outbox_store.owed_before(later()))


def test_an_announcement_stays_owed_until_its_receiver_handled_it(monkeypatch: pytest.MonkeyPatch) -> None:
    owed = _owed_announcement(987_654)
    assert isinstance(owed.message, Announce) and owed.message.owed_id == owed.message_id

    def failing(*_: Any) -> None:
        raise RuntimeError("the announcement failed: SQS delivers it again")

    monkeypatch.setattr(announcements, "announce_build", failing)
    with pytest.raises(RuntimeError):
        send_notifications(_notifications_event(owed.message))
    failed_owed = _still_owed(owed)
    monkeypatch.undo()
    send_notifications(_notifications_event(owed.message))  # the build is gone: nothing to announce, handled

    assert failed_owed  # a handler that failed leaves it for the sweeper
    assert not _still_owed(owed)


def test_an_announcement_given_up_on_is_no_longer_owed() -> None:
    owed = _owed_announcement(987_655)
    assert isinstance(owed.message, Announce)

    abandon_notifications(_notifications_event(owed.message))

    assert not _still_owed(owed)  # the sweeper does not send again what failed every delivery
