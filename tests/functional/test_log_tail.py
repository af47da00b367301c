"""A runner's finish carrying its log's last chunk (``logTail``): a log never sent before is stored with one S3 put,
a longer one is sealed as before, and a bad tail changes nothing.

No pump runs in this module: each test claims its build's job and mints its token the way dispatch does, then
calls the job protocol through Chalice's test client (or, for the last, runs a runner process against the API
served on loopback).
"""

from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from chalicelib.domain.job_protocol import job_specs, runner_calls
from chalicelib.store import blobs
from chalicelib.store import jobs as job_store
from tests.awscalls import s3_calls
from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_job_logs import stored_objects
from tests.functional.test_job_tokens import ClaimedJob, claim, everything_stored, runner, start_build
from tests.gitserver import GitServer
from tests.runners import RunnerProcess, dispatch
from tests.support import Account, Reply

ECHO_YML = appveyor_yml("build_script:", "  - echo hello")


@dataclass
class RunningJob:
    """A claimed job of a one-job build, and a runner's calls for it."""

    project: BuildProject
    version: str
    claimed: ClaimedJob
    account: Account

    @property
    def job_id(self) -> str:
        return self.claimed.job_id

    @property
    def prefix(self) -> str:
        job = job_store.get_job(self.job_id)
        assert job is not None
        return blobs.prefix_of(job)

    def put_chunk(self, index: int, body: bytes) -> None:
        reply = runner(self.account, self.claimed.token.token).put(f"/{self.job_id}/log/{index}", raw=body)
        assert reply.status == 204, reply.body

    def finish(self, log_chunks: int, tail: bytes | None = None, **fields: Any) -> Reply:
        body: dict[str, Any] = {"result": "success", "message": None, "logChunks": log_chunks, "artifacts": []}
        if tail is not None:
            body["logTail"] = base64.b64encode(tail).decode()
        return runner(self.account, self.claimed.token.token).post(f"/{self.job_id}/finish", {**body, **fields})

    def status(self) -> str:
        return str(
            next(job for job in self.project.build(self.version)["jobs"] if job["jobId"] == self.job_id)["status"]
        )


@pytest.fixture
def job(account: Account, git_server: GitServer) -> RunningJob:
    project, queued = start_build(account, git_server, {"appveyor.yml": ECHO_YML})
    return RunningJob(project, queued["version"], claim(queued["jobs"][0]["jobId"]), account)


def test_a_finish_carrying_a_log_never_sent_stores_it_with_one_s3_put(job: RunningJob) -> None:
    with s3_calls(job.prefix) as calls:
        reply = job.finish(1, tail=b"Build started\nhello\n", logTailSent=False)

    assert reply.status == 204, reply.body
    assert calls == ["PutObject log/log.txt"]
    assert stored_objects(job.prefix) == {f"{job.prefix}log/log.txt": b"Build started\nhello\n"}
    assert job.project.log(job.job_id) == "Build started\nhello\n"
    assert job.status() == "success"


def test_a_tail_sent_before_replaces_its_stale_chunk_and_no_chunk_is_left(job: RunningJob) -> None:
    job.put_chunk(0, b"first\n")  # a flush of the chunk being filled, which grew after it

    with s3_calls(job.prefix) as calls:
        reply = job.finish(1, tail=b"first\nlast\n", logTailSent=True)

    assert reply.status == 204, reply.body
    assert stored_objects(job.prefix) == {f"{job.prefix}log/log.txt": b"first\nlast\n"}
    assert "CopyObject log/log.txt" not in calls and calls.count("PutObject log/log.txt") == 1


def test_the_tail_of_a_longer_log_is_sealed_after_the_chunks_sent_before_it(job: RunningJob) -> None:
    job.put_chunk(0, b"first chunk\n")
    job.put_chunk(1, b"second chunk\n")

    reply = job.finish(3, tail=b"the tail\n", logTailSent=False)

    assert reply.status == 204, reply.body
    assert stored_objects(job.prefix) == {f"{job.prefix}log/log.txt": b"first chunk\nsecond chunk\nthe tail\n"}


def test_a_finish_without_a_tail_seals_the_chunks_sent_as_before(job: RunningJob) -> None:
    job.put_chunk(0, b"an older runner's log\n")

    reply = job.finish(1)

    assert reply.status == 204, reply.body
    assert stored_objects(job.prefix) == {f"{job.prefix}log/log.txt": b"an older runner's log\n"}
    assert job.status() == "success"


def test_a_tail_sent_whose_earlier_chunks_are_missing_is_a_conflict_that_stores_nothing(job: RunningJob) -> None:
    before = everything_stored()

    reply = job.finish(3, tail=b"the tail\n", logTailSent=False)

    assert reply.status == 409, reply.body
    assert everything_stored() == before


@pytest.mark.parametrize(
    ("log_chunks", "fields"),
    [
        pytest.param(1, {"logTail": "not base64!"}, id="not-base64"),
        pytest.param(1, {"logTail": "aGVsbG8"}, id="base64-cut-short"),
        pytest.param(1, {"logTail": 12}, id="not-a-string"),
        pytest.param(0, {"logTail": base64.b64encode(b"orphan\n").decode()}, id="no-chunk-to-be"),
        pytest.param(1, {"logTail": "aGVsbG8K", "logTailSent": "no"}, id="sent-not-a-boolean"),
        pytest.param(1, {"logTail": base64.b64encode(b"x" * 17).decode()}, id="bigger-than-a-chunk"),
        pytest.param(1, {"logTail": base64.b64encode(b"x" * 800_000).decode()}, id="bigger-than-a-body"),
    ],
)
def test_a_bad_tail_is_a_400_that_changes_nothing(
    job: RunningJob, monkeypatch: pytest.MonkeyPatch, log_chunks: int, fields: dict[str, Any]
) -> None:
    monkeypatch.setattr(runner_calls, "MAX_LOG_CHUNK_BYTES", 16)  # bigger-than-a-chunk's 17 bytes are one too many
    before = everything_stored()

    reply = job.finish(log_chunks, **fields)

    assert reply.status == 400, reply.body
    assert isinstance(reply.json["message"], str) and reply.json["message"]
    assert everything_stored() == before
    assert job.status() == "running"


def test_a_runner_that_says_its_log_was_never_sent_leaves_objects_only_under_its_own_prefix(
    account: Account, git_server: GitServer
) -> None:
    matrix = appveyor_yml("environment:", "  matrix:", "    - N: 1", "    - N: 2", "build_script:", "  - echo $N")
    project, queued = start_build(account, git_server, {"appveyor.yml": matrix})
    liar, other = (RunningJob(project, queued["version"], claim(j["jobId"]), account) for j in queued["jobs"])
    liar.put_chunk(0, b"sent after all\n")
    liar.put_chunk(5, b"a stray chunk\n")
    other.put_chunk(0, b"the other job's line\n")
    before = everything_stored()["objects"]

    reply = liar.finish(1, tail=b"never sent, it says\n", logTailSent=False)

    assert reply.status == 204, reply.body
    after = everything_stored()["objects"]
    changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
    assert changed and all(key.startswith(liar.prefix) for key in changed), changed
    assert project.log(liar.job_id) == "never sent, it says\n"
    assert project.log(other.job_id) == "the other job's line\n"


def test_a_runner_whose_service_ignores_the_tail_stores_it_as_a_chunk_and_finishes_again(
    account: Account, git_server: GitServer, api_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo from afar")})
    version = project.start()["version"]
    job_id = project.build(version)["jobs"][0]["jobId"]
    finish = runner_calls.finish

    def finish_as_a_service_before_the_tail(job: Any, said: runner_calls.Finish, **rest: Any) -> None:
        # as a service from before logTail, which ignores a field it does not know
        finish(job, dataclasses.replace(said, log_tail=None, log_tail_sent=True), **rest)

    monkeypatch.setattr(runner_calls, "finish", finish_as_a_service_before_the_tail)

    RunnerProcess(dispatch(job_id, api_url)).wait(seconds=120)

    assert project.build(version)["status"] == "success"
    assert "from afar" in project.log(job_id)


def test_a_runner_whose_spec_does_not_offer_the_tail_puts_its_last_chunk_and_finishes_without_it(
    account: Account, git_server: GitServer, api_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo as ever")})
    version = project.start()["version"]
    job_id = project.build(version)["jobs"][0]["jobId"]
    spec, finish = job_specs.job_spec, runner_calls.finish
    tails: list[Any] = []

    def spec_of_a_service_before_the_tail(*args: Any) -> dict[str, Any]:
        return {name: value for name, value in spec(*args).items() if name != "logTailOnFinish"}

    def finish_noting_the_tail(job: Any, said: runner_calls.Finish, **rest: Any) -> None:
        tails.append(said.log_tail)
        finish(job, said, **rest)

    monkeypatch.setattr(job_specs, "job_spec", spec_of_a_service_before_the_tail)
    monkeypatch.setattr(runner_calls, "finish", finish_noting_the_tail)

    RunnerProcess(dispatch(job_id, api_url)).wait(seconds=120)

    assert project.build(version)["status"] == "success"
    assert tails == [None]  # a service from before would have left a tail out of the log
    assert "as ever" in project.log(job_id)
