"""A job's move and the state of its build it leads to are one write (domain/execution/progress.py ``move_in_build``):
the build's revision is its guard, so jobs moving at the same moment each derive their build from the others' moves.

No pump runs here: builds stay queued until a test claims their jobs as dispatch does and moves them itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job, MoveFields
from chalicelib.core.messages import Announce
from chalicelib.core.status import Event, Status
from chalicelib.domain import announcements
from chalicelib.domain.execution import progress
from chalicelib.domain.shared import outbox
from chalicelib.store import build_states
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from tests.awscalls import dynamodb_calls
from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_job_tokens import MATRIX_YML, claim, start_build
from tests.gitserver import GitServer
from tests.support import Account

ONE_JOB_YML = appveyor_yml("build_script:", "  - echo one")


def running_build(account: Account, git_server: GitServer, yml: str) -> tuple[BuildProject, Build, list[Job]]:
    """A build whose jobs are all claimed as dispatch claims them, its state written: the build and its jobs as a
    runner's finish reads them."""
    project, queued = start_build(account, git_server, {"appveyor.yml": yml})
    for job in queued["jobs"]:
        claim(job["jobId"])
    progress.refresh_build(queued["projectId"], queued["buildId"])
    build = build_store.get_build(queued["projectId"], queued["buildId"], consistent=True)
    assert build is not None and build.status == Status.RUNNING
    return project, build, job_store.get_jobs(build.job_ids)


def test_two_jobs_that_finish_from_the_same_reads_leave_their_build_finished(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build, (first, second) = running_build(account, git_server, MATRIX_YML)
    as_read = {first.job_id: first, second.job_id: second}  # both finishes read every job before either wrote
    stale_reads = {first.job_id, second.job_id}
    real_others = progress._others

    def others(read: Build, job_id: str) -> list[Any]:
        if job_id in stale_reads:
            stale_reads.discard(job_id)
            return [as_read[other] for other in read.job_ids if other != job_id]
        return real_others(read, job_id)

    monkeypatch.setattr(progress, "_others", others)
    ended = [progress.finish_job(job, True, MoveFields(holder=job.token_hash), build=build) for job in (first, second)]

    shown = project.build(build.version)
    assert ended == [Status.SUCCESS, Status.SUCCESS]
    assert [job["status"] for job in shown["jobs"]] == ["success", "success"]
    assert shown["status"] == "success"  # the second write found the build moved on, and derived it again


def test_a_cancel_between_a_finishs_read_and_its_write_still_cancels_the_job(
    account: Account, git_server: GitServer
) -> None:
    project, build, (job,) = running_build(account, git_server, ONE_JOB_YML)

    cancelled = project.account.api.delete(
        f"/builds/{project.project['accountName']}/{project.project['slug']}/{build.version}"
    )
    ended = progress.finish_job(job, True, MoveFields(holder=job.token_hash), build=build)  # as read before the cancel

    shown = project.build(build.version)
    assert cancelled.status == 204
    assert ended is Status.CANCELLED
    assert (shown["status"], shown["jobs"][0]["status"]) == ("cancelled", "cancelled")


def test_a_one_job_builds_finish_is_one_write_of_its_job_its_build_and_its_projects_summary(
    account: Account, git_server: GitServer
) -> None:
    project, build, (job,) = running_build(account, git_server, ONE_JOB_YML)

    with dynamodb_calls() as calls:
        ended = progress.finish_job(job, True, MoveFields(holder=job.token_hash), build=build)

    listed = project.account.api.get("/projects").json
    (mine,) = [p for p in listed if p["projectId"] == project.project["projectId"]]
    assert ended is Status.SUCCESS
    assert calls == ["TransactWriteItems"]
    assert (mine["builds"][0]["buildId"], mine["builds"][0]["status"]) == (build.build_id, "success")


def test_a_build_whose_state_keeps_changing_under_a_move_has_its_job_moved_alone_and_then_derived(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build, (job,) = running_build(account, git_server, ONE_JOB_YML)
    real_save = build_states.save_build_state

    def busy(read: Build, after: Build, owed: Any = None, move: Any = None, claim: bool = False) -> build_states.Saved:
        # every write of a move with its build is refused, as a big matrix's moves at the same moment can be
        return build_states.Saved.BUILD_CHANGED if move is not None else real_save(read, after, owed, move, claim)

    monkeypatch.setattr(build_states, "save_build_state", busy)
    ended = progress.move_in_build(build, job, Event.SUCCEED, MoveFields(holder=job.token_hash), attempts=3)

    shown = project.build(build.version)
    assert ended is not None and ended.status == Status.SUCCESS
    assert (shown["status"], shown["jobs"][0]["status"]) == ("success", "success")


def test_a_finish_of_an_attempt_that_no_longer_holds_the_job_moves_nothing(
    account: Account, git_server: GitServer
) -> None:
    project, build, (job,) = running_build(account, git_server, ONE_JOB_YML)

    ended = progress.finish_job(job, True, MoveFields(holder="0" * 64), build=build)

    assert ended is None
    assert project.build(build.version)["jobs"][0]["status"] == "running"


def test_a_finished_builds_announcement_names_its_project_and_reads_it_with_the_build_and_one_sent_before_still_reads(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, build, (job,) = running_build(account, git_server, ONE_JOB_YML)
    sent: list[Any] = []
    monkeypatch.setattr(outbox, "send", lambda messages, delay_seconds=0: sent.extend(messages) or True)
    progress.finish_job(job, True, MoveFields(holder=job.token_hash), build=build)
    (announced,) = [message for message in sent if isinstance(message, Announce)]

    named = reads_before_acting(monkeypatch, announced)
    before = reads_before_acting(monkeypatch, replace(announced, project_key=None))  # as a version before sent it

    assert announced.project_key == (build.account_id, build.project_slug)
    assert named == ["BatchGetItem"]  # the build and its project at once
    assert before == ["GetItem", "Query"]  # the build, then its project by id


class StopAnnouncing(Exception):
    """Raised where an announcement starts to act: a test counts what it read up to there."""


def reads_before_acting(monkeypatch: pytest.MonkeyPatch, message: Announce) -> list[str]:
    """The DynamoDB calls an announcement makes before its first act (the post of its commit status)."""

    def stop(*_: Any) -> None:
        raise StopAnnouncing

    monkeypatch.setattr(announcements.commit_statuses, "announce_final", stop)
    assert message.build_id is not None
    with dynamodb_calls() as calls, pytest.raises(StopAnnouncing):
        announcements.announce_build(message.project_id, message.build_id, message.revision, 0.0, message.project_key)
    return list(calls)


def test_a_job_ended_alone_between_another_jobs_reads_and_its_write_still_ends_the_build(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build, (first, second) = running_build(account, git_server, MATRIX_YML)
    real_others = progress._others
    ended_alone: list[Status | None] = []

    def others(read: Build, job_id: str) -> list[Any]:
        seen = real_others(read, job_id)  # the finish of the first job reads the second running ...
        if not ended_alone:  # ... and the sweeper ends the second (its lease lost) before the finish writes
            ended_alone.append(
                progress.move(second, Event.FAIL, MoveFields(message="The job's runner stopped responding."))
            )
            progress.refresh(second)  # derives "running", as shown: it writes all the same
        return seen

    monkeypatch.setattr(progress, "_others", others)
    ended = progress.finish_job(first, True, MoveFields(holder=first.token_hash), build=build)

    shown = project.build(build.version)
    assert (ended, ended_alone) == (Status.SUCCESS, [Status.FAILED])
    assert sorted(job["status"] for job in shown["jobs"]) == ["failed", "success"]
    assert shown["status"] == "failed"  # not left running for ever, with no announcement


def test_a_rerun_between_a_finishs_reads_and_its_write_leaves_the_build_running_with_nothing_announced(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build, (second, first) = running_build(account, git_server, MATRIX_YML)
    assert progress.finish_job(first, False, MoveFields(holder=first.token_hash)) is Status.FAILED
    build = build_store.get_build(build.project_id, build.build_id, consistent=True) or build
    second = job_store.get_job(second.job_id) or second
    real_others = progress._others
    reruns: list[int] = []

    def others(read: Build, job_id: str) -> list[Any]:
        seen = real_others(read, job_id)  # the finish of the second job reads the first failed ...
        if not reruns:  # ... and a user re-runs the failed job before the finish writes
            reruns.append(
                project.account.api.put("/builds", {"buildId": build.build_id, "reRunIncomplete": True}).status
            )
        return seen

    monkeypatch.setattr(progress, "_others", others)
    sent: list[Any] = []
    monkeypatch.setattr(outbox, "send", lambda messages, delay_seconds=0: sent.extend(messages) or True)
    ended = progress.finish_job(second, True, MoveFields(holder=second.token_hash), build=build)

    shown = project.build(build.version)
    assert (ended, reruns) == (Status.SUCCESS, [200])
    assert sorted(job["status"] for job in shown["jobs"]) == ["queued", "success"]
    assert shown["status"] == "running"
    assert [message for message in sent if isinstance(message, Announce)] == []  # no false "failed" announced


def test_a_matrixs_jobs_claimed_from_the_same_read_of_their_build_each_claim_in_one_write(
    account: Account, git_server: GitServer
) -> None:
    project, queued = start_build(account, git_server, {"appveyor.yml": MATRIX_YML})
    build = build_store.get_build(queued["projectId"], queued["buildId"], consistent=True)
    assert build is not None
    first, second = job_store.get_jobs(build.job_ids)

    claimed, calls = [], []
    for job in (first, second):  # both dispatches read the build before either claimed
        with dynamodb_calls() as made:
            claimed.append(progress.move_in_build(build, job, Event.CLAIM, MoveFields(lease_expires=2_000_000_000)))
        calls.append(list(made))

    shown = project.build(build.version)
    again = build_store.get_build(build.project_id, build.build_id, consistent=True)
    assert [job.status if job else None for job in claimed] == ["running", "running"]
    assert calls == [["TransactWriteItems"], ["TransactWriteItems"]]  # no read of the other job, no refusal
    assert shown["status"] == "running" and shown["started"] is not None
    assert again is not None and again.revision == build.revision + 2  # a finish that read either derives again
