"""A build's job messages are sent after its jobs are written; when that send fails, the write stands and nothing
would ever send them: the sweeper sends again the message of a job no runner claimed (domain/job_messages.py)."""

from __future__ import annotations

import time

import pytest

from chalicelib.domain.job_messages import UNCLAIMED_SECONDS, resend_unclaimed_jobs
from chalicelib.local.pump import SqsPump
from chalicelib.store import jobs as job_store
from chalicelib.store import queues
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account


def later() -> float:
    """The sweeper's clock once a job has waited long enough for its message to be sent again."""
    return time.time() + UNCLAIMED_SECONDS + 1


def test_a_build_whose_job_message_was_lost_runs_once_the_sweeper_sends_it_again(
    account: Account, git_server: GitServer, pump: SqsPump, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")})

    def sqs_down(job_ids: list[str]) -> None:
        raise RuntimeError(f"{len(job_ids)} messages were not queued: ServiceUnavailable")

    monkeypatch.setattr(queues, "send_jobs", sqs_down)  # SQS fails between the build's write and its send
    queued = project.start()
    monkeypatch.undo()
    time.sleep(1)
    waiting = project.build(queued["version"])

    resent = resend_unclaimed_jobs(now=later())
    build = project.wait(queued["version"])

    job_id = waiting["jobs"][0]["jobId"]
    assert queued["status"] == "queued" and waiting["status"] == "queued"  # answered, stored, but nothing runs it
    assert job_id in resent
    assert build["status"] == "success"
    assert job_id not in resend_unclaimed_jobs(now=later())  # a claimed job is never sent again


def test_a_job_whose_message_was_just_sent_is_not_sent_again(account: Account, git_server: GitServer) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")})

    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]

    assert job_id not in resend_unclaimed_jobs()  # sent a moment ago: a runner may well be about to claim it


def test_a_job_deleted_before_its_message_is_sent_again_is_left_deleted(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")})
    queued = project.start()
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    assert account.api.delete(project.path).status == 204  # the project, its builds and jobs go

    assert job_store.note_resent(job_id) is False
    assert job_store.get_job(job_id) is None  # no stray item made of its id
