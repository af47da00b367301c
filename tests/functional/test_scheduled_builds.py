"""Scheduled builds: a project's scheduleCrontabExpression starts one build of its default branch when due,
however many ticks see the run and however often its message is delivered, with APPVEYOR_SCHEDULED_BUILD; the
tick only claims runs and queues them (no repository read), at most an account's share per tick; a build that
cannot start says why and waits for the next run. The tick is called as its handler is, with the clock a test
gives it, and the notifications queue's messages are handed to its handler here (no pump runs, so a test sees what
a tick queued); no runner runs (a started build stays queued)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.core import DEFAULT_ACCOUNT_ID

from app import abandon_notifications, send_notifications
from chalicelib import aws
from chalicelib.config import settings as service_settings
from chalicelib.core.messages import Announce, StartScheduledBuild, body_of, notification_message
from chalicelib.domain.builds import builds
from chalicelib.domain.job_protocol import job_specs
from chalicelib.domain.triggers import schedules
from chalicelib.local.pump import sqs_event
from chalicelib.shapes.time import timestamp
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store import schedules as schedule_store
from chalicelib.store.models import ProjectModel
from chalicelib.workers.schedules import start_scheduled_builds
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, add_project, assert_names_field, in_parallel, project_path, unique

YML = appveyor_yml("build_script:", "  - echo scheduled=$APPVEYOR_SCHEDULED_BUILD")
FIELD = "scheduleCrontabExpression"


def settings(account: Account, path: str) -> dict[str, Any]:
    reply = account.api.get(path + "/settings")
    assert reply.status == 200, reply.body
    shown: dict[str, Any] = reply.json["settings"]
    return shown


def schedule(account: Account, path: str, expression: str | None) -> dict[str, Any]:
    """PUT the settings back with ``expression``; the settings as they are then."""
    reply = account.api.put("/projects", {**settings(account, path), FIELD: expression})
    assert reply.status == 204, reply.body
    return settings(account, path)


def next_run(shown: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(shown["scheduleNextRun"][:26] + "+00:00")


def history(account: Account, path: str) -> list[dict[str, Any]]:
    reply = account.api.get(path + "/history?recordsNumber=50")
    assert reply.status == 200, reply.body
    builds: list[dict[str, Any]] = reply.json["builds"]
    return builds


def variables_of(build: dict[str, Any]) -> dict[str, str]:
    """The variables the build's first job's runner is handed."""
    stored = build_store.get_build(build["projectId"], build["buildId"])
    assert stored is not None
    return dict(job_specs.job_spec(job_store.get_jobs(stored.job_ids)[0])["variables"])


def stored_schedule(project: dict[str, Any]) -> list[Any]:
    """The schedule's attributes the project's item carries (none: it is not in the by-schedule index)."""
    item = ProjectModel.get(project["accountId"], project["slug"])
    values = (item.schedule_expression, item.scheduled, item.schedule_due, item.schedule_error, item.schedule_started)
    return [value for value in values if value is not None]


def queued(*projects: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages on the notifications queue that name a run of these projects, taken off it as its handler's
    delivery would take them (the others, of other tests' projects due the same minute, are dropped)."""
    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=service_settings().notifications_queue)["QueueUrl"]
    taken: list[dict[str, Any]] = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        taken += batch
        entries = [{"Id": str(i), "ReceiptHandle": message["ReceiptHandle"]} for i, message in enumerate(batch)]
        sqs.delete_message_batch(QueueUrl=url, Entries=entries)
    ids = {project["projectId"] for project in projects}
    return [message for message in taken if any(run.project_id in ids for run in runs_of([message]))]


def event_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return sqs_event(f"arn:aws:sqs:us-east-1:{DEFAULT_ACCOUNT_ID}:{service_settings().notifications_queue}", messages)


def deliver(messages: list[dict[str, Any]]) -> None:
    """Hand the messages to the notifications queue's handler, one delivery each, as Lambda would."""
    for message in messages:
        send_notifications(event_of([message]), None)


def runs_of(messages: list[dict[str, Any]]) -> list[StartScheduledBuild]:
    """The scheduled runs the messages name."""
    runs = [notification_message(json.loads(message["Body"])) for message in messages]
    return [run for run in runs if isinstance(run, StartScheduledBuild)]


def run_of(project: BuildProject, due: datetime) -> StartScheduledBuild:
    """The message that starts the build of the project's run due at ``due``."""
    shown = project.project
    return StartScheduledBuild(shown["accountId"], shown["projectId"], shown["slug"], int(due.timestamp()))


def tick_and_deliver(now: datetime, *projects: dict[str, Any]) -> None:
    start_scheduled_builds(now=now)
    deliver(queued(*projects))


def test_a_due_schedule_starts_one_build_of_the_default_branch_however_many_ticks_and_deliveries_see_it(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    shown = schedule(account, project.path, "* * * * *")
    due = next_run(shown)
    seen = due + timedelta(seconds=5)
    mine = (project.project["accountId"], project.project["slug"])
    due_before = [found for found in schedule_store.due_projects(due - timedelta(seconds=1)) if found == mine]
    due_when_seen = [found for found in schedule_store.due_projects(seen) if found == mine]

    start_scheduled_builds(now=seen)
    start_scheduled_builds(now=seen)  # the same minute's tick again (a redelivery, another stack)
    in_parallel([lambda: start_scheduled_builds(now=seen), lambda: start_scheduled_builds(now=seen)])
    messages = queued(project.project)
    assert (due_before, due_when_seen) == ([], [mine])  # the index finds it once its run is due
    assert runs_of(messages) == [run_of(project, due)]  # one run claimed, one message
    assert history(account, project.path) == []  # the tick starts no build: the queue's handler does
    deliver(messages)
    deliver(messages)  # delivered again: the run's start is taken
    in_parallel([lambda: deliver(messages), lambda: deliver(messages)])

    (build,) = history(account, project.path)
    variables = variables_of(build)
    assert (build["branch"], build["commitId"], build["status"]) == ("master", project.first_commit, "queued")
    assert variables["APPVEYOR_SCHEDULED_BUILD"] == "True" and "APPVEYOR_FORCED_BUILD" not in variables
    after = settings(account, project.path)
    assert after[FIELD] == "* * * * *" and next_run(after) == due + timedelta(minutes=1)
    assert "scheduleLastError" not in after

    tick_and_deliver(seen + timedelta(minutes=1), project.project)  # the next run
    assert len(history(account, project.path)) == 2
    deliver(messages)  # the older run's message, late: a later run has started
    assert len(history(account, project.path)) == 2


def test_runs_missed_while_nothing_ticked_start_one_build(account: Account, git_server: GitServer) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    due = next_run(schedule(account, project.path, "*/5 * * * *"))
    late = due + timedelta(hours=2, minutes=1)

    tick_and_deliver(late, project.project)

    assert len(history(account, project.path)) == 1
    assert next_run(settings(account, project.path)) == due + timedelta(hours=2, minutes=5)


def test_a_build_that_cannot_start_says_why_and_waits_for_the_next_run(account: Account, git_server: GitServer) -> None:
    gone = add_project(account, git_server.url_of(unique("gone") + ".git"), provider="git")
    path = project_path(gone)
    due = next_run(schedule(account, path, "0 3 * * *"))

    start_scheduled_builds(now=due + timedelta(seconds=1))
    claimed = settings(account, path)
    deliver(queued(gone))
    failed = settings(account, path)
    tick_and_deliver(due + timedelta(minutes=1), gone)  # not tried again before its next run

    assert history(account, path) == []
    assert "scheduleLastError" not in claimed  # the tick read no repository
    assert failed["scheduleLastError"].startswith(f"The build scheduled for {timestamp(due)} did not start: ")
    assert next_run(failed) == due + timedelta(days=1)
    assert settings(account, path) == failed


def test_due_projects_left_when_the_ticks_time_is_up_start_on_the_next_tick(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    seen = next_run(schedule(account, project.path, "* * * * *")) + timedelta(seconds=1)

    tick = schedules.claim_due_runs(seen, has_time=lambda: False)
    assert tick.out_of_time and queued(project.project) == []

    tick_and_deliver(seen + timedelta(seconds=30), project.project)
    assert len(history(account, project.path)) == 1


def test_a_removed_schedule_starts_nothing_and_a_settings_put_without_the_field_keeps_it(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    assert not stored_schedule(project.project)  # a new project's item is as one stored before schedules...
    assert settings(account, project.path)[FIELD] is None  # ... and reads without one
    due = next_run(schedule(account, project.path, "0 3 * * *"))
    without_field = {name: value for name, value in settings(account, project.path).items() if name != FIELD}
    assert account.api.put("/projects", without_field).status == 204
    kept = settings(account, project.path)

    removed = schedule(account, project.path, None)
    tick_and_deliver(due + timedelta(seconds=1), project.project)

    assert (kept[FIELD], next_run(kept)) == ("0 3 * * *", due)
    assert removed[FIELD] is None and "scheduleNextRun" not in removed and not stored_schedule(project.project)
    assert history(account, project.path) == []
    assert schedule(account, project.path, "")[FIELD] is None


def test_a_bad_expression_is_refused_naming_the_field_and_changes_nothing(
    account: Account, git_server: GitServer
) -> None:
    # on loopback: should another module's pump tick when it comes due, its build fetches nothing from elsewhere
    path = project_path(add_project(account, git_server.url_of(unique("never") + ".git"), provider="git"))
    before = schedule(account, path, "0 3 * * 1-5")

    for expression in ("0 3 * *", "0 0 L * *", "61 * * * *", "0 0 30 2 *", 5):
        reply = account.api.put("/projects", {**before, FIELD: expression})
        assert_names_field(reply, FIELD)

    assert settings(account, path) == before


def test_a_tick_queues_every_due_project_without_reading_any_repository(
    account: Account, git_server: GitServer
) -> None:
    projects = [BuildProject(account, git_server, {"appveyor.yml": YML}) for _ in range(schedules.SEND_BATCH + 2)]
    dues = {project.path: next_run(schedule(account, project.path, "* * * * *")) for project in projects}
    requests_before = len(git_server.authorizations)

    start_scheduled_builds(now=max(dues.values()) + timedelta(seconds=1))

    assert len(git_server.authorizations) == requests_before  # however slow a repository, no tick waits for it
    messages = queued(*(project.project for project in projects))
    assert sorted(runs_of(messages), key=str) == sorted(
        (run_of(project, dues[project.path]) for project in projects), key=str
    )
    assert all(history(account, project.path) == [] for project in projects)
    deliver(messages)  # each start a delivery of its own (in AWS, handlers run side by side)
    assert all(len(history(account, project.path)) == 1 for project in projects)


def test_an_account_over_its_share_of_a_tick_leaves_the_rest_due_for_the_next_tick(
    account: Account, other_account: Account, git_server: GitServer
) -> None:
    crowded = [BuildProject(account, git_server, {"appveyor.yml": YML}) for _ in range(3)]
    other = BuildProject(other_account, git_server, {"appveyor.yml": YML})
    dues = [next_run(schedule(account, project.path, "* * * * *")) for project in crowded]
    dues.append(next_run(schedule(other_account, other.path, "* * * * *")))
    seen = max(dues) + timedelta(seconds=1)

    first = schedules.claim_due_runs(seen, has_time=lambda: True, per_account=2)
    first_messages = queued(*(project.project for project in [*crowded, other]))
    still_due = [project for project in crowded if next_run(settings(account, project.path)) <= seen]
    second = schedules.claim_due_runs(seen, has_time=lambda: True, per_account=2)
    second_messages = queued(*(project.project for project in [*crowded, other]))

    claimed = Counter(run.account_id for run in runs_of(first_messages))
    assert claimed == {crowded[0].project["accountId"]: 2, other.project["accountId"]: 1}  # not held back
    crowded_account = crowded[0].project["accountId"]
    assert first.deferred[crowded_account] == 1 and len(still_due) == 1
    assert runs_of(second_messages) == [run_of(still_due[0], dues[crowded.index(still_due[0])])]
    assert second.deferred[crowded_account] == 0  # other tests' projects that came due meanwhile are not this one's
    deliver(first_messages + second_messages)
    assert [len(history(account, project.path)) for project in crowded] == [1, 1, 1]
    assert len(history(other_account, other.path)) == 1


def test_a_run_whose_message_could_not_be_queued_is_due_again_on_the_next_tick(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    due = next_run(schedule(account, project.path, "0 3 * * *"))
    seen = due + timedelta(seconds=1)

    with monkeypatch.context() as patch:
        patch.setenv("CONVEYOR_NOTIFICATIONS_QUEUE", unique("missing"))  # SQS refuses every send
        start_scheduled_builds(now=seen)
    unsent = settings(account, project.path)
    tick_and_deliver(seen + timedelta(minutes=1), project.project)

    assert next_run(unsent) == due and "scheduleLastError" not in unsent
    assert len(history(account, project.path)) == 1


def test_a_run_whose_message_failed_every_delivery_says_so_and_starts_nothing_later(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    due = next_run(schedule(account, project.path, "0 3 * * *"))
    start_scheduled_builds(now=due + timedelta(seconds=1))
    messages = queued(project.project)

    abandon_notifications(event_of(messages), None)
    deliver(messages)  # a delivery after that starts nothing

    assert history(account, project.path) == []
    expected = f"The build scheduled for {timestamp(due)} did not start: its message failed every delivery."
    assert settings(account, project.path)["scheduleLastError"] == expected


class HandlerStopped(BaseException):
    """The Lambda handler stopped mid-call (its time ran out while reading the repository): no except clause runs."""


def test_a_start_the_handler_did_not_finish_says_so_and_is_not_taken_again(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    due = next_run(schedule(account, project.path, "0 3 * * *"))
    start_scheduled_builds(now=due + timedelta(seconds=1))
    messages = queued(project.project)

    def stop(_: object) -> None:
        raise HandlerStopped

    with monkeypatch.context() as patch:
        patch.setattr(builds, "start_scheduled_build", stop)
        with pytest.raises(HandlerStopped):
            deliver(messages)
    deliver(messages)  # redelivered: the start was taken
    abandon_notifications(event_of(messages), None)  # nor can the dead-letter handler take it

    assert history(account, project.path) == []
    expected = f"The build scheduled for {timestamp(due)} did not start: the service stopped while starting it."
    assert settings(account, project.path)["scheduleLastError"] == expected


def test_a_schedule_removed_after_its_run_was_claimed_starts_nothing(account: Account, git_server: GitServer) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    due = next_run(schedule(account, project.path, "0 3 * * *"))
    start_scheduled_builds(now=due + timedelta(seconds=1))

    messages = queued(project.project)
    schedule(account, project.path, None)
    deliver(messages)

    assert runs_of(messages) == [run_of(project, due)]
    assert history(account, project.path) == [] and not stored_schedule(project.project)


def test_a_scheduled_runs_message_reads_back_and_older_bodies_read_as_before() -> None:
    run = StartScheduledBuild(3, 4, "a-project", int(datetime(2024, 5, 1, 3, tzinfo=UTC).timestamp()))

    assert notification_message(json.loads(json.dumps(body_of(run)))) == run
    assert notification_message({"projectId": 3, "revision": 4, "buildId": 5}) == Announce(3, 4, build_id=5)
