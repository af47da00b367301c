"""Starting builds and reading them back, without runners: what the API answers before any job runs."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from pynamodb.connection.base import VerboseClientError
from pynamodb.exceptions import CancellationReason, TransactWriteError
from pynamodb.transactions import TransactWrite

from chalicelib import executors
from chalicelib.core.jobs import Job, MoveFields
from chalicelib.core.status import Event, Status
from chalicelib.domain.execution import lost_jobs, progress
from chalicelib.domain.execution.dispatch import dispatch_job
from chalicelib.domain.job_identity.job_tokens import heartbeat, mint_token, runner_job
from chalicelib.domain.job_protocol import runner_calls
from chalicelib.protocol.ticket import Ticket
from chalicelib.store import build_states, job_moves
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store.models import BuildModel, ProjectModel
from tests.awscalls import dynamodb_calls
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, in_parallel, member_of_role

SIMPLE = {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")}


@pytest.fixture
def project(account: Account, git_server: GitServer) -> BuildProject:
    return BuildProject(account, git_server, SIMPLE, message="First commit\n\nWith a body.")


def test_started_build_is_queued_with_its_commit_and_no_start_time(project: BuildProject) -> None:
    build = project.start()

    assert build["status"] == "queued"
    assert build["buildNumber"] == 1
    assert build["version"] == "1.0.1"
    assert build["branch"] == "master"
    assert build["commitId"] == project.first_commit
    assert build["message"] == "First commit"
    assert build["messageExtended"] == "With a body."
    assert build["authorName"] == "Ada Lovelace"
    assert build["committed"].endswith("+00:00")
    assert build["jobs"] == []
    assert build["messages"] == []
    assert "started" not in build and "finished" not in build and "updated" not in build
    assert "pullRequestId" not in build


def test_a_tag_is_built_as_its_push_would_build_it(project: BuildProject) -> None:
    project.repository.set_ref("refs/tags/v1.0", project.first_commit)
    project.repository.commit({"appveyor.yml": "version: 1.0.{build}\n", "later.txt": "after the tag"})

    build = project.start(tag="v1.0")

    assert (build["isTag"], build["tag"], build["branch"]) == (True, "v1.0", "v1.0")
    assert build["commitId"] == project.first_commit


def test_version_follows_the_repository_format_with_branch(project: BuildProject) -> None:
    project.repository.commit(
        {"appveyor.yml": appveyor_yml("version: 2.{build}-{branch}", "build_script:", "  - echo hi")}, branch="dev"
    )

    assert project.start(branch="dev")["version"] == "2.1-dev"
    assert project.start(branch="dev")["version"] == "2.2-dev"


def test_fifty_parallel_starts_get_fifty_builds_with_distinct_consecutive_numbers(project: BuildProject) -> None:
    started = in_parallel([project.start] * 50)

    assert sorted(build["buildNumber"] for build in started) == list(range(1, 51))
    history = project.account.api.get(f"{project.path}/history?recordsNumber=100")
    assert history.status == 200, history.body
    assert sorted(build["buildId"] for build in history.json["builds"]) == sorted(b["buildId"] for b in started)


def test_form_encoded_start_request_is_accepted(project: BuildProject) -> None:
    body = f"accountName={project.project['accountName']}&projectSlug={project.project['slug']}&branch=master"
    reply = project.account.api.post(
        "/builds", raw=body.encode(), headers={"Content-Type": "application/x-www-form-urlencoded"}
    )

    assert reply.status == 200, reply.body
    assert reply.json["commitId"] == project.first_commit


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"branch": "no-such-branch"}, "Branch 'no-such-branch' not found"),
        ({"branch": "master", "commitId": "0123456789abcdef0123456789abcdef01234567"}, "not found"),
        ({"pullRequestId": 42}, "#42"),
        ({"tag": "v9.9"}, "refs/tags/v9.9"),
    ],
)
def test_unknown_branch_commit_or_pull_request_is_404_and_creates_nothing(
    project: BuildProject, fields: dict[str, object], message: str
) -> None:
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"], **fields}
    reply = project.account.api.post("/builds", body)

    assert reply.status == 404, reply.body
    assert message in reply.json["message"]
    assert "build" not in project.account.api.get(project.path).json
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"projectSlug": "x"},
        {"accountName": "x"},
        "not an object",
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "pullRequestId": "seven"},
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "pullRequestId": 7, "branch": "master"},
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "pullRequestId": 7, "tag": "v1"},
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "tag": "v1", "branch": "master"},
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "tag": "v1", "commitId": "0123456"},  # not the tag's
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "environmentVariables": ["A=1"]},
        {"accountName": "ACCOUNT", "projectSlug": "SLUG", "environmentVariables": {"A": {"nested": 1}}},
    ],
)
def test_bad_start_request_is_400(project: BuildProject, body: object) -> None:
    if isinstance(body, dict):
        body = {
            key: {"ACCOUNT": project.project["accountName"], "SLUG": project.project["slug"]}.get(value, value)
            if isinstance(value, str)
            else value
            for key, value in body.items()
        }
    reply = project.account.api.post("/builds", body)

    assert reply.status == 400, reply.body
    assert reply.json["message"]
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []


def test_build_of_a_project_in_another_account_is_not_found(project: BuildProject, other_account: Account) -> None:
    reply = other_account.api.post(
        "/builds", {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}
    )

    assert reply.status == 404
    assert reply.json == {"message": "Project not found or access denied."}


def test_role_without_run_build_permission_cannot_start_or_cancel(project: BuildProject) -> None:
    project.account.add_role("Watchers", allowed=set())
    watcher = member_of_role(project.account, "Watchers")
    version = project.start()["version"]

    start = watcher.post(
        "/builds", {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}
    )
    cancel = watcher.delete(f"/builds/{project.project['accountName']}/{project.project['slug']}/{version}")

    assert start.status == 403
    assert cancel.status == 403
    assert watcher.get(f"{project.path}/build/{version}").status == 200


def test_reads_show_the_last_build_by_branch_and_version(project: BuildProject) -> None:
    project.repository.commit(SIMPLE, branch="dev", message="On dev")
    first = project.start()
    dev = project.start(branch="dev")

    last = project.account.api.get(project.path).json
    assert last["build"]["buildId"] == dev["buildId"]
    assert [job["status"] for job in last["build"]["jobs"]] == ["queued"]
    assert project.account.api.get(f"{project.path}/branch/master").json["build"]["buildId"] == first["buildId"]
    assert project.account.api.get(f"{project.path}/branch/dev").json["build"]["message"] == "On dev"
    assert project.account.api.get(f"{project.path}/branch/nope").status == 404
    assert (
        project.account.api.get(f"{project.path}/build/{first['version']}").json["build"]["buildId"] == first["buildId"]
    )
    assert project.account.api.get(f"{project.path}/build/9.9.9").status == 404
    listed = project.account.api.get("/projects").json
    (mine,) = [p for p in listed if p["projectId"] == project.project["projectId"]]
    assert [build["buildId"] for build in mine["builds"]] == [dev["buildId"]]


def claimed_and_refreshed(project: BuildProject, queued: dict[str, Any]) -> list[str]:
    """The DynamoDB calls of a build's refresh once its job is claimed (as dispatch does before it runs the job)."""
    claimed = job_moves.claim_job(project.build(queued["version"])["jobs"][0]["jobId"], int(time.time()) + 60)
    assert claimed is not None
    with dynamodb_calls() as calls:
        progress.refresh_build(claimed.project_id, claimed.build_id)
    return calls


def test_an_older_build_that_moves_on_leaves_the_newer_one_shown_as_the_projects_last(project: BuildProject) -> None:
    older, newer = project.start(), project.start()

    calls = claimed_and_refreshed(project, older)

    listed = project.account.api.get("/projects").json
    (mine,) = [p for p in listed if p["projectId"] == project.project["projectId"]]
    assert [(build["buildId"], build["status"]) for build in mine["builds"]] == [(newer["buildId"], "queued")]
    assert project.build(older["version"])["status"] == "running"
    # the build, its jobs, then the build and its project's summary in one step, refused for the summary only,
    # then the build alone: no lookup of the project (its key is on the build) nor of the newest build
    assert calls == ["GetItem", "BatchGetItem", "TransactWriteItems", "UpdateItem"]


def test_a_build_stored_before_builds_kept_their_projects_key_still_shows_as_its_last_and_asks_about_statuses(
    project: BuildProject,
) -> None:
    queued = project.start()
    BuildModel(project.project["projectId"], queued["buildId"]).update(
        actions=[BuildModel.project_slug.remove(), BuildModel.flags.set({"forced": True})]
    )

    calls = claimed_and_refreshed(project, queued)

    shown = project.account.api.get(project.path).json["build"]
    assert (shown["buildId"], shown["status"]) == (queued["buildId"], "running")
    # its project found by id, and asked again whether it posts commit statuses
    assert calls == ["GetItem", "BatchGetItem", "Query", "TransactWriteItems", "Query"]


def test_a_new_build_shows_as_its_projects_last_in_the_step_that_starts_it(project: BuildProject) -> None:
    queued = project.start()

    calls = claimed_and_refreshed(project, queued)

    shown = project.account.api.get(project.path).json["build"]
    assert (shown["buildId"], shown["status"]) == (queued["buildId"], "running")
    assert calls == ["GetItem", "BatchGetItem", "TransactWriteItems"]


def test_history_pages_newest_first_with_exclusive_start(project: BuildProject) -> None:
    ids = [project.start()["buildId"] for _ in range(5)]

    first_page = project.account.api.get(f"{project.path}/history?recordsNumber=2").json
    assert [b["buildId"] for b in first_page["builds"]] == [ids[4], ids[3]]
    assert all(b["jobs"] == [] for b in first_page["builds"])
    assert first_page["project"]["slug"] == project.project["slug"]
    second = project.account.api.get(f"{project.path}/history?recordsNumber=2&startBuildId={ids[3]}").json
    assert [b["buildId"] for b in second["builds"]] == [ids[2], ids[1]]
    last = project.account.api.get(f"{project.path}/history?recordsNumber=100&startBuildId={ids[1]}").json
    assert [b["buildId"] for b in last["builds"]] == [ids[0]]


def test_history_of_a_branch_only_shows_that_branch(project: BuildProject) -> None:
    project.repository.commit(SIMPLE, branch="dev")
    project.start()
    dev = project.start(branch="dev")

    page = project.account.api.get(f"{project.path}/history?recordsNumber=10&branch=dev").json
    assert [b["buildId"] for b in page["builds"]] == [dev["buildId"]]


@pytest.mark.parametrize(
    "query", ["", "?recordsNumber=0", "?recordsNumber=101", "?recordsNumber=x", "?recordsNumber=5&startBuildId=0"]
)
def test_history_with_a_bad_page_is_400(project: BuildProject, query: str) -> None:
    reply = project.account.api.get(f"{project.path}/history{query}")

    assert reply.status == 400
    assert reply.json["message"]


def test_cancel_of_a_queued_build_cancels_it_at_once(project: BuildProject) -> None:
    build = project.start()

    reply = project.account.api.delete(
        f"/builds/{project.project['accountName']}/{project.project['slug']}/{build['version']}"
    )

    assert reply.status == 204
    cancelled = project.build(build["version"])
    assert cancelled["status"] == "cancelled"
    assert [job["status"] for job in cancelled["jobs"]] == ["cancelled"]
    assert cancelled["finished"]


def test_cancel_or_delete_of_an_unknown_build_is_404(project: BuildProject) -> None:
    account, slug = project.project["accountName"], project.project["slug"]

    assert project.account.api.delete(f"/builds/{account}/{slug}/0.0.0").status == 404
    assert project.account.api.delete("/builds/999999999").status == 404
    assert project.account.api.delete("/builds/abc").status == 404
    assert project.account.api.get("/buildjobs/nosuchjob/log").status == 404


def test_build_of_another_account_cannot_be_deleted_or_rerun(project: BuildProject, other_account: Account) -> None:
    build = project.start()

    assert other_account.api.delete(f"/builds/{build['buildId']}").status == 404
    assert other_account.api.put("/builds", {"buildId": build["buildId"]}).status == 404
    assert project.build(build["version"])["status"] == "queued"


def test_two_deliveries_of_a_job_message_at_the_same_moment_run_the_job_once(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")})
    queued = project.start()  # no pump in this module: the two deliveries below are the only ones
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    both_claiming = threading.Barrier(2, timeout=10)
    plan = job_moves.planned_move
    tickets: list[Ticket] = []

    def claim_together(job: Job, event: Event, **kwargs: Any) -> job_moves.JobMove | None:
        if job.status == Status.QUEUED:
            both_claiming.wait()  # each delivery has read the job as queued: now both claim it
        return plan(job, event, **kwargs)

    monkeypatch.setattr(job_moves, "planned_move", claim_together)
    monkeypatch.setattr(executors, "run", lambda ticket, image=None: tickets.append(ticket))  # each delivery's
    monkeypatch.setenv("CONVEYOR_RUNNER_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CONVEYOR_EXECUTOR", "lambda")  # handed over and left running, as to the runner function
    key = (queued["projectId"], queued["buildId"])  # as the job's first message names its build
    deliveries = [threading.Thread(target=dispatch_job, args=(job_id, key)) for _ in range(2)]
    for delivery in deliveries:
        delivery.start()
    for delivery in deliveries:
        delivery.join(timeout=60)

    job = job_store.get_job(job_id)
    assert job is not None and job.attempts == 1
    assert [ticket.job_id for ticket in tickets] == [job_id]  # one runner, one token
    assert project.build(queued["version"])["status"] == "running"


@pytest.mark.parametrize("key", [None, (0, 0)], ids=["a-resend-naming-no-build", "naming-another-build"])
def test_a_job_message_that_names_no_build_or_another_claims_the_job_for_its_own_build(
    project: BuildProject, monkeypatch: pytest.MonkeyPatch, key: tuple[int, int] | None
) -> None:
    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    tickets: list[Ticket] = []
    monkeypatch.setattr(executors, "run", lambda ticket, image=None: tickets.append(ticket))
    monkeypatch.setenv("CONVEYOR_RUNNER_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CONVEYOR_EXECUTOR", "lambda")

    dispatch_job(job_id, key)

    build = project.build(queued["version"])
    assert [ticket.job_id for ticket in tickets] == [job_id]
    assert (build["status"], build["jobs"][0]["status"]) == ("running", "running")


@pytest.mark.parametrize(
    ("exit_code", "status", "why"),
    [
        (1, "failed", "The job's runner exited with code 1 before it finished the job; the job failed."),
        (-9, "failed", "The job's runner was killed (SIGKILL) before it finished the job; the job failed."),
        (0, "running", None),
    ],
)
def test_a_local_runner_that_exits_without_finishing_its_job_fails_it_at_once_saying_how_it_ended(
    project: BuildProject, monkeypatch: pytest.MonkeyPatch, exit_code: int, status: str, why: str | None
) -> None:
    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    monkeypatch.setattr(
        executors, "run", lambda ticket, image=None: exit_code
    )  # a runner that ended at once, as it did
    monkeypatch.setenv("CONVEYOR_RUNNER_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CONVEYOR_EXECUTOR", "local")

    dispatch_job(job_id)

    job = project.build(queued["version"])["jobs"][0]
    # a runner that exits 0 has finished its job or found it ended: its job is not read again (here, where it
    # did neither, the lease sweeper would end it); one killed or crashed leaves its job to its executor
    assert job["status"] == status
    if why is not None:
        assert job["message"] == why
        assert project.log(job_id).rstrip("\n").rsplit("\n", 1)[-1] == why  # the log's last line says it too


def start_body(project: BuildProject) -> dict[str, Any]:
    return {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}


def _cancel_next_transaction(monkeypatch: pytest.MonkeyPatch, code: str, last: int = 1, times: int = 1) -> None:
    """The next transaction (or ``times`` transactions) is cancelled as DynamoDB cancels one: ``code`` on its last
    ``last`` items (the project's summary, and before it the build's state when 2), None on the others."""
    original = TransactWrite._commit
    cancelled: list[int] = []

    def commit(self: TransactWrite) -> Any:
        if len(cancelled) == times:
            return original(self)
        kinds = (self._condition_check_items, self._delete_items, self._put_items, self._update_items)
        items = sum(len(kind) for kind in kinds)
        cancelled.append(items)
        reasons = [None] * (items - last) + [CancellationReason(code=code, message=code)] * last
        error = {"Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"}}
        cause = VerboseClientError(error, "TransactWriteItems", cancellation_reasons=reasons)
        raise TransactWriteError("Failed to write transaction items", cause)

    monkeypatch.setattr(TransactWrite, "_commit", commit)


def test_a_build_started_while_another_transaction_holds_its_projects_item_is_stored_not_refused(
    project: BuildProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cancel_next_transaction(monkeypatch, "TransactionConflict")  # another build of the project writing its state

    reply = project.account.api.post("/builds", start_body(project))

    assert reply.status == 200, reply.body
    assert (reply.json["buildNumber"], project.build(reply.json["version"])["status"]) == (1, "queued")
    assert project.account.api.get(project.path).json["build"]["buildId"] == reply.json["buildId"]


def test_a_start_that_keeps_finding_its_projects_item_busy_is_a_409_that_stores_nothing(
    project: BuildProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cancel_next_transaction(monkeypatch, "TransactionConflict", times=100)
    monkeypatch.setattr(build_states, "_START_ATTEMPTS", 3)  # refused the same after any number of tries: fewer waits

    reply = project.account.api.post("/builds", start_body(project))

    assert reply.status == 409, reply.body
    assert reply.json["message"].endswith("it was not started. Try again.")
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []
    assert project.account.api.get(f"{project.path}/settings").json["settings"]["nextBuildNumber"] == 1


def test_a_start_whose_version_is_taken_is_a_409_that_uses_its_number_up_so_the_next_start_builds(
    project: BuildProject,
) -> None:
    project.start()
    reply = project.account.api.put(f"{project.path}/settings/build-number", {"nextBuildNumber": 1})
    assert reply.status == 204, reply.body

    refused = project.account.api.post("/builds", start_body(project))
    number_after = project.account.api.get(f"{project.path}/settings").json["settings"]["nextBuildNumber"]
    started = project.account.api.post("/builds", start_body(project))

    assert refused.status == 409, refused.body
    assert refused.json["message"] == "Build version '1.0.1' already exists in this project."
    assert number_after == 2  # used up, as a counter's number would be: the project is not stuck on it
    assert (started.status, started.json["version"]) == (200, "1.0.2")


def test_a_project_stored_before_it_kept_a_next_build_number_numbers_its_builds_from_1(project: BuildProject) -> None:
    key = ProjectModel(project.project["accountId"], project.project["slug"])
    key.update(actions=[ProjectModel.next_build_number.remove()])  # as an item written without one reads

    assert [project.start()["buildNumber"] for _ in range(2)] == [1, 2]
    assert project.account.api.get(f"{project.path}/settings").json["settings"]["nextBuildNumber"] == 3


def test_a_version_taken_is_still_refused_whatever_the_projects_summary_said(
    project: BuildProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.start()  # build 1 holds 1.0.1, and the number is set back to 1 by hand
    assert project.account.api.put(f"{project.path}/settings/build-number", {"nextBuildNumber": 1}).status == 204
    _cancel_next_transaction(monkeypatch, "ConditionalCheckFailed", last=2)  # the last job, and the summary

    reply = project.account.api.post("/builds", start_body(project))

    assert reply.status == 409 and "already exists" in reply.json["message"]


def test_a_finish_checked_against_one_attempt_never_ends_the_next(project: BuildProject) -> None:
    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    first = mint_token()
    assert job_moves.claim_job(job_id, int(time.time()) + 60, first.token_hash)
    checked = runner_job(job_id, f"Bearer {first.token}")  # the finish request's token check, then it seals the log
    # meanwhile its attempt is lost, the job re-run and claimed again
    progress.move(checked, Event.FAIL, MoveFields(message="lost"))
    progress.refresh(checked)
    again = project.account.api.put("/builds", {"buildId": queued["buildId"], "reRunIncomplete": True})
    assert again.status == 200, again.body
    second = mint_token()
    assert job_moves.claim_job(job_id, int(time.time()) + 60, second.token_hash)

    runner_calls.finish(checked, runner_calls.Finish("success"))  # the first attempt's request goes on

    job = job_store.get_job(job_id)
    assert job is not None and job.status == Status.RUNNING  # the second attempt's, untouched
    assert heartbeat(job_id, f"Bearer {second.token}") == {"status": "running"}


def test_job_whose_lease_expires_ends_failed_and_so_does_its_build(project: BuildProject) -> None:
    queued = project.start()  # no runner here: the job stays queued until "its runner" claims it
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    assert job_moves.claim_job(job_id, lease_expires=int(time.time()) - 1)  # a runner claims it, then dies

    assert lost_jobs.expire_leases() >= 1

    build = project.build(queued["version"])
    assert build["status"] == "failed"
    assert build["jobs"][0]["status"] == "failed"
    job = job_store.get_job(job_id)
    assert job is not None and "lease expired" in (job.message or "")


def test_job_whose_message_went_to_the_dead_letter_queue_ends_failed(project: BuildProject) -> None:
    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]

    lost_jobs.abandon_job(job_id, "The job could not be run: its message failed every delivery.")

    build = project.build(queued["version"])
    assert build["status"] == "failed"
    assert build["jobs"][0]["status"] == "failed"


def test_deleting_the_project_deletes_its_builds(project: BuildProject) -> None:
    build = project.start()

    assert project.account.api.delete(project.path).status == 204

    assert build_store.get_build_by_id(build["buildId"]) is None
