"""The job token, attacked: a build's runner (or a script that got hold of its token) tries to reach past its job.

No pump runs in this module: builds stay queued until a test claims their jobs and mints their tokens the way
dispatch does, then calls the job protocol (/api/runner/jobs/{jobId}/...) through Chalice's test client.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from chalicelib import aws
from chalicelib.api import runner as runner_views
from chalicelib.config import settings
from chalicelib.domain.execution import lost_jobs
from chalicelib.domain.job_identity.job_tokens import NewToken, keys_of, mint_token
from chalicelib.domain.job_protocol import job_reports, runner_cache, runner_calls
from chalicelib.errors import Conflict, Invalid
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.cache import save_cache
from chalicelib.runner.job import LEASE_LOST, run_ticket
from chalicelib.runner.protocol import JobClient
from chalicelib.runner.remote_cache import RemoteCache
from chalicelib.store import blobs, job_moves, logs
from chalicelib.store import jobs as job_store
from chalicelib.store.cache import cache_entry_metadata
from chalicelib.store.models import JobModel
from tests.awscalls import dynamodb_calls
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer, Repository
from tests.support import Account, Caller, Reply, request_of

MATRIX_YML = appveyor_yml(
    "environment:",
    "  matrix:",
    "    - FLAVOR: alpha",
    "    - FLAVOR: beta",
    "build_script:",
    "  - echo building $FLAVOR",
)
ENTRY_ID = "0123456789abcdef"
RACERS, RACE_CALLS = 3, 40  # threads per side, and the calls each makes at least while all of them race


@dataclass(frozen=True)
class Operation:
    """One operation of the job protocol, as a runner calls it."""

    method: str
    path: str  # below /api/runner/jobs/{jobId}
    body: Any = None
    raw: bytes | None = None

    def call(self, caller: Caller, job_id: str, headers: dict[str, str] | None = None) -> Reply:
        sent = {**({"Content-Type": "application/octet-stream"} if self.raw is not None else {}), **(headers or {})}
        return caller.call(self.method, f"/{job_id}{self.path}", self.body, raw=self.raw, headers=sent)

    def __str__(self) -> str:
        return f"{self.method} {{jobId}}{self.path}"


OPERATIONS = (
    Operation("GET", ""),
    Operation("POST", "/heartbeat"),
    Operation("PUT", "/log/0", raw=b"an attacker's line\n"),
    Operation("PUT", "/log/7", raw=b"an attacker's line\n"),
    Operation("POST", "/artifacts", {"fileName": "planted.txt", "size": 7}),
    Operation("POST", "/cache/entries", {"ids": [ENTRY_ID]}),
    Operation("POST", "/cache/uploads", {"id": ENTRY_ID, "size": 7, "metadata": {}}),
    Operation("POST", "/cache/prune", {"keep": []}),
    Operation("POST", "/messages", {"messages": [{"kind": "message", "message": "planted", "category": "error"}]}),
    Operation("POST", "/tests", {"tests": [{"testName": "planted", "outcome": "Failed"}]}),
    Operation("PUT", "/tests", {"tests": [{"testName": "planted", "outcome": "Failed"}]}),
    Operation("PUT", "/build", {"version": "planted-9.9.9"}),
    Operation("POST", "/finish", {"result": "failed", "message": "planted", "logChunks": 0, "artifacts": []}),
)


@dataclass
class ClaimedJob:
    job_id: str
    token: NewToken


def runner(account: Account, token: str | None) -> Caller:
    """A caller of the job protocol holding ``token`` (as a Bearer token), or no credential at all."""
    return Caller(account.client, token, prefix="/api/runner/jobs")


def claim(job_id: str, lease_seconds: int = 120, named: bool = True) -> ClaimedJob:
    """What dispatch does before it starts a runner: a fresh token (naming the job's build and project, unless
    ``named`` is False: a token minted before tokens named them), and the claim that stores its hash."""
    job = job_store.get_job(job_id)
    assert job is not None
    token = mint_token(keys_of(job) if named else None)
    assert job_moves.claim_job(job_id, int(time.time()) + lease_seconds, token.token_hash)
    return ClaimedJob(job_id, token)


def start_build(account: Account, git_server: GitServer, files: dict[str, str]) -> tuple[BuildProject, dict[str, Any]]:
    project = BuildProject(account, git_server, files)
    queued = project.build(project.start()["version"])  # the start answer lists no jobs, as AppVeyor's does not
    assert [job["status"] for job in queued["jobs"]] == ["queued"] * len(queued["jobs"])
    return project, queued


def everything_stored() -> dict[str, Any]:
    """Every item of every table and every object of the bucket, as stored: what "changes nothing" compares."""
    dynamodb, s3 = aws.client("dynamodb"), aws.client("s3")
    tables: dict[str, list[str]] = {}
    for name in dynamodb.list_tables()["TableNames"]:
        items: list[str] = []
        for page in dynamodb.get_paginator("scan").paginate(TableName=name, ConsistentRead=True):
            items += [json.dumps(item, sort_keys=True) for item in page["Items"]]
        tables[name] = sorted(items)
    objects: dict[str, bytes] = {}
    bucket = settings().bucket
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for entry in page.get("Contents", []):
            objects[entry["Key"]] = s3.get_object(Bucket=bucket, Key=entry["Key"])["Body"].read()
    return {"tables": tables, "objects": objects}


def refused_everywhere(caller: Caller, job_id: str) -> list[str]:
    """The operations on ``job_id`` that did NOT answer 401 to ``caller`` (each with what it answered)."""
    wrong = []
    for operation in OPERATIONS:
        reply = operation.call(caller, job_id)
        if reply.status != 401:
            wrong.append(f"{operation}: {reply.status} {reply.body[:200]!r}")
    return wrong


def log_chunks(job_id: str) -> list[bytes]:
    """The chunks of a running job's log, as stored."""
    job = job_store.get_job(job_id)
    assert job is not None
    prefix = blobs.job_prefix(job.account_id, job.project_id, job.build_id, job.job_id)
    return [logs.read_range(chunk.key, 0, chunk.size) for chunk in logs.list_chunks(prefix)]


def job_as_the_api_shows_it(project: BuildProject, version: str, job_id: str) -> dict[str, Any]:
    build = project.build(version)
    return {"version": build["version"], "job": next(job for job in build["jobs"] if job["jobId"] == job_id)}


@pytest.fixture
def matrix_build(
    account: Account, git_server: GitServer
) -> tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]:
    """A build of two jobs, both claimed as dispatch claims them: job A and job B, each with its own token."""
    project, queued = start_build(account, git_server, {"appveyor.yml": MATRIX_YML})
    first, second = (claim(job["jobId"]) for job in queued["jobs"])
    return project, queued, first, second


def test_job_a_token_is_refused_on_every_operation_of_job_b_and_changes_nothing(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    project, queued, job_a, job_b = matrix_build
    as_a = runner(account, job_a.token.token)
    assert as_a.get(f"/{job_a.job_id}").status == 200  # the token works where it belongs
    before_api = job_as_the_api_shows_it(project, queued["version"], job_b.job_id)
    before_log = project.log(job_b.job_id)
    before = everything_stored()

    wrong = refused_everywhere(as_a, job_b.job_id)

    assert wrong == []
    assert everything_stored() == before
    assert job_as_the_api_shows_it(project, queued["version"], job_b.job_id) == before_api
    assert project.log(job_b.job_id) == before_log
    assert before_api["job"]["status"] == "running"
    assert runner(account, job_b.token.token).post(f"/{job_b.job_id}/heartbeat").json == {"status": "running"}


def test_a_token_of_another_accounts_job_is_refused_too(
    account: Account,
    other_account: Account,
    git_server: GitServer,
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
) -> None:
    _, _, job_a, _ = matrix_build
    _, foreign = start_build(other_account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo x")})
    victim = claim(foreign["jobs"][0]["jobId"])
    before = everything_stored()

    wrong = refused_everywhere(runner(account, job_a.token.token), victim.job_id)

    assert wrong == []
    assert everything_stored() == before


@pytest.mark.parametrize(
    "credential",
    [
        pytest.param(lambda account, job: {}, id="no-authorization"),
        pytest.param(lambda account, job: {"Authorization": f"Bearer {account.key}"}, id="owner-api-key"),
        pytest.param(lambda account, job: {"Authorization": job.token.token}, id="token-without-scheme"),
        pytest.param(lambda account, job: {"Authorization": f"Basic {job.token.token}"}, id="token-as-basic"),
        pytest.param(lambda account, job: {"Authorization": f"Bearer {job.token.token_hash}"}, id="stored-hash"),
        pytest.param(lambda account, job: {"Authorization": f"Bearer cvyj_{job.token.token_hash}"}, id="hash-as-token"),
        pytest.param(lambda account, job: {"Authorization": "Bearer cvyj_"}, id="bare-prefix"),
        pytest.param(lambda account, job: {"Authorization": f"Bearer {job.token.token[:-1]}"}, id="token-cut-short"),
        pytest.param(lambda account, job: {"Authorization": f"Bearer {job.token.token}x"}, id="token-lengthened"),
    ],
)
def test_without_the_jobs_own_token_every_operation_answers_401_and_changes_nothing(
    account: Account,
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
    credential: Callable[[Account, ClaimedJob], dict[str, str]],
) -> None:
    _, _, _, job_b = matrix_build
    headers = credential(account, job_b)
    caller = runner(account, None)
    before = everything_stored()

    answers = {str(operation): operation.call(caller, job_b.job_id, headers).status for operation in OPERATIONS}

    assert answers == {str(operation): 401 for operation in OPERATIONS}
    assert everything_stored() == before


def test_a_job_token_is_no_key_to_the_rest_of_the_api(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    project, queued, job_a, _ = matrix_build
    as_token = Caller(account.client, job_a.token.token)
    before = everything_stored()

    answers = {
        "GET /projects": as_token.get("/projects").status,
        "GET /buildjobs/{A}/log": as_token.get(f"/buildjobs/{job_a.job_id}/log").status,
        "GET build": as_token.get(f"{project.path}/build/{queued['version']}").status,
        "POST /builds": as_token.post(
            "/builds", {"accountName": account.name, "projectSlug": project.project["slug"]}
        ).status,
        "DELETE build": as_token.delete(f"/builds/{account.name}/{project.project['slug']}/{queued['version']}").status,
        "GET /users": as_token.get("/users").status,
    }

    assert answers == dict.fromkeys(answers, 401)
    assert everything_stored() == before


def test_the_spec_route_answers_its_own_jobs_token_only(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
) -> None:
    _, _, job_a, job_b = matrix_build

    def spec_with(token: str) -> Any:
        return runner_views.spec(request_of("GET", "/", {"Authorization": f"Bearer {token}"}), jobId=job_a.job_id)

    own, other = spec_with(job_a.token.token), spec_with(job_b.token.token)

    assert (own.status_code, own.body["jobId"]) == (200, job_a.job_id)
    assert other.status_code == 401


def test_once_job_a_finishes_its_token_is_refused_on_every_operation(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], api_url: str
) -> None:
    project, queued, job_a, _ = matrix_build
    as_a = runner(account, job_a.token.token)
    assert as_a.put(f"/{job_a.job_id}/log/0", raw=b"the runner's last words\n").status == 204
    finished = as_a.post(
        f"/{job_a.job_id}/finish", {"result": "success", "message": None, "logChunks": 1, "artifacts": []}
    )
    assert finished.status == 204, finished.body
    ended = job_as_the_api_shows_it(project, queued["version"], job_a.job_id)
    assert ended["job"]["status"] == "success"
    assert JobModel.get(job_a.job_id, consistent_read=True).token_hash is None
    before = everything_stored()

    wrong = refused_everywhere(as_a, job_a.job_id)
    ran_again = run_ticket(Ticket(api_url, job_a.job_id, job_a.token.token))  # a runner handed its ticket again

    assert wrong == []
    assert ran_again == LEASE_LOST  # it runs nothing
    assert everything_stored() == before
    assert project.log(job_a.job_id) == "the runner's last words\n"


def test_a_token_whose_lease_has_expired_is_refused_on_every_operation(account: Account, git_server: GitServer) -> None:
    _, queued = start_build(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo x")})
    lapsed = claim(queued["jobs"][0]["jobId"], lease_seconds=-5)
    lost_jobs.expire_leases()  # the sweeper, every minute: the job ends failed, its lease lost
    before = everything_stored()

    wrong = refused_everywhere(runner(account, lapsed.token.token), lapsed.job_id)

    assert wrong == []
    assert everything_stored() == before


def test_the_token_is_stored_only_as_its_sha256_and_nowhere_in_plain_text(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    _, _, job_a, job_b = matrix_build
    for job in (job_a, job_b):  # the calls a runner makes: nothing it sends may store its token either
        as_runner = runner(account, job.token.token)
        assert as_runner.get(f"/{job.job_id}").status == 200
        assert as_runner.post(f"/{job.job_id}/heartbeat").status == 200
        assert as_runner.put(f"/{job.job_id}/log/0", raw=b"a line\n").status == 204
        assert as_runner.post(f"/{job.job_id}/messages", OPERATIONS[8].body).status == 204
    item = aws.client("dynamodb").get_item(
        TableName=JobModel.Meta.table_name, Key={"job_id": {"S": job_a.job_id}}, ConsistentRead=True
    )["Item"]
    stored = json.dumps(everything_stored(), default=lambda data: data.decode(errors="replace"))

    assert item["token_hash"] == {"S": hashlib.sha256(job_a.token.token.encode()).hexdigest()}
    assert item["token_hash"]["S"] != job_a.token.token
    assert [name for name, value in item.items() if job_a.token.token in json.dumps(value)] == []
    for job in (job_a, job_b):
        secret_part = job.token.token.removeprefix("cvyj_")
        assert job.token.token not in stored
        assert secret_part not in stored
        assert stored.count(job.token.token_hash) == 1  # on its own job's item, and nowhere else


def test_a_job_cancelled_through_the_api_hears_cancelling_at_its_heartbeat_then_its_token_dies(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    project, queued, job_a, job_b = matrix_build
    cancelled = account.api.delete(f"/builds/{account.name}/{project.project['slug']}/{queued['version']}")
    assert cancelled.status == 204, cancelled.body

    heartbeats = [runner(account, job.token.token).post(f"/{job.job_id}/heartbeat") for job in (job_a, job_b)]

    assert [(reply.status, reply.json["status"]) for reply in heartbeats] == [(200, "cancelling")] * 2
    assert [reply.json["message"].startswith("Cancelled by ") for reply in heartbeats] == [True, True]  # by whom
    as_a = runner(account, job_a.token.token)
    finished = as_a.post(
        f"/{job_a.job_id}/finish", {"result": "cancelled", "message": None, "logChunks": 0, "artifacts": []}
    )
    assert finished.status == 204, finished.body
    assert job_as_the_api_shows_it(project, queued["version"], job_a.job_id)["job"]["status"] == "cancelled"
    assert as_a.post(f"/{job_a.job_id}/heartbeat").status == 401
    assert runner(account, job_b.token.token).post(f"/{job_b.job_id}/heartbeat").json["status"] == "cancelling"


def test_a_heartbeat_renews_the_lease_in_one_conditional_write_and_reads_nothing(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    _, _, job_a, job_b = matrix_build
    before, b_before = (JobModel.get(job.job_id, consistent_read=True).lease_expires for job in (job_a, job_b))
    time.sleep(1.1)  # the lease is kept in whole seconds: a renewal must move it

    with dynamodb_calls() as calls:
        renewed = runner(account, job_a.token.token).post(f"/{job_a.job_id}/heartbeat")
    with dynamodb_calls() as refused_calls:
        refused = runner(account, job_a.token.token).post(f"/{job_b.job_id}/heartbeat")

    assert (renewed.status, renewed.json) == (200, {"status": "running"})
    assert calls == ["UpdateItem"]  # every running job's most frequent call costs one write
    assert JobModel.get(job_a.job_id, consistent_read=True).lease_expires > before
    assert refused.status == 401  # job A's token renews nothing of job B's ...
    assert refused_calls == ["UpdateItem"]  # ... whose lease stays as it was: the write's condition refused it
    assert JobModel.get(job_b.job_id, consistent_read=True).lease_expires == b_before


def test_a_job_that_reported_nothing_is_counted_without_reading_its_reports_and_one_that_did_is_read(
    account: Account, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    project, queued, silent, talking = matrix_build
    said = {"messages": [{"kind": "message", "message": "hello", "category": "information"}]}
    assert runner(account, talking.token.token).post(f"/{talking.job_id}/messages", said).status == 204
    finish = {"result": "success", "message": None, "logChunks": 0, "artifacts": []}

    with dynamodb_calls() as silent_calls:
        assert runner(account, silent.token.token).post(f"/{silent.job_id}/finish", finish).status == 204
    with dynamodb_calls() as talking_calls:
        assert runner(account, talking.token.token).post(f"/{talking.job_id}/finish", finish).status == 204

    shown = {job["jobId"]: job for job in project.build(queued["version"])["jobs"]}
    assert (shown[silent.job_id]["status"], shown[silent.job_id]["messagesCount"]) == ("success", 0)
    assert (shown[talking.job_id]["status"], shown[talking.job_id]["messagesCount"]) == ("success", 1)
    assert "Query" not in silent_calls  # its reports: it sent none, as its token's read of the job said
    assert "Query" in talking_calls


def test_a_runner_reads_its_spec_in_one_call_and_tokens_and_jobs_from_before_still_read_it(
    account: Account, git_server: GitServer
) -> None:
    _, queued = start_build(account, git_server, {"appveyor.yml": MATRIX_YML})
    job_ids = [job["jobId"] for job in queued["jobs"]]
    named, unnamed = claim(job_ids[0]), claim(job_ids[1], named=False)

    with dynamodb_calls() as named_calls:
        named_spec = runner(account, named.token.token).get(f"/{named.job_id}")
    with dynamodb_calls() as unnamed_calls:
        unnamed_spec = runner(account, unnamed.token.token).get(f"/{unnamed.job_id}")
    JobModel(unnamed.job_id).update(actions=[JobModel.project_slug.remove()])
    with dynamodb_calls() as old_calls:
        old_spec = runner(account, unnamed.token.token).get(f"/{unnamed.job_id}")

    assert (named_spec.status, unnamed_spec.status, old_spec.status) == (200, 200, 200)
    assert named_spec.json["title"] == unnamed_spec.json["title"] == old_spec.json["title"]
    assert named_calls == ["BatchGetItem"]  # the job (its token), its build and its project at once
    assert unnamed_calls == ["GetItem", "BatchGetItem"]  # the job (its token), then its build and project
    assert old_calls == ["GetItem", "GetItem", "Query"]  # the job, its build, then its project by id


def test_a_token_whose_named_build_is_changed_is_refused_on_every_operation_and_changes_nothing(
    account: Account,
    other_account: Account,
    git_server: GitServer,
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
) -> None:
    _, _, job_a, _ = matrix_build
    _, theirs = start_build(other_account, git_server, {"appveyor.yml": MATRIX_YML})
    victim = claim(theirs["jobs"][0]["jobId"])
    secret_a, keys_a = job_a.token.token.partition(".")[0], job_store.get_job(job_a.job_id)
    assert keys_a is not None and keys_a.project_slug is not None
    forged = [
        f"{secret_a}.{_named(keys_a.account_id, keys_a.project_id, keys_a.build_id + 1, keys_a.project_slug)}",
        f"{secret_a}.{victim.token.token.partition('.')[2]}",  # another account's build and project
        f"{secret_a}.{_named(0, 0, 0, 'x')}",
        f"{secret_a}.{_named(2**200, 10**130, 1, 'x')}",  # numbers DynamoDB would refuse: a 401 all the same
        f"{secret_a}.{_named(1, 1, 1, {'not': 'text'})}",
        f"{secret_a}.{_named(1, 1, 1, 'a' * 5000)}",
        f"{secret_a}.not-base64!",
        secret_a,  # the keys left out
    ]
    before = everything_stored()

    wrong = [
        f"{token}: {fail}" for token in forged for fail in refused_everywhere(runner(account, token), job_a.job_id)
    ]
    wrong += refused_everywhere(runner(account, forged[1]), victim.job_id)

    assert wrong == []
    assert everything_stored() == before


def _named(*keys: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(keys)).encode()).decode().rstrip("=")


# Racing the API as the local stack serves it (chalice local: one thread per request) over loopback HTTP.


def hammer(calls: dict[str, Callable[[requests.Session], int]], each: int = RACE_CALLS) -> dict[str, Counter[int]]:
    """Each call made over and over from its own thread (and session) until every thread has made ``each`` calls:
    they overlap the whole time; the statuses each got."""
    statuses: dict[str, Counter[int]] = {name: Counter() for name in calls}

    def racing() -> bool:
        return any(statuses[name].total() < each for name in calls)

    def repeat(name: str) -> None:
        with requests.Session() as session:
            while racing():
                statuses[name][calls[name](session)] += 1

    threads = [threading.Thread(target=repeat, args=(name,)) for name in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


@pytest.fixture
def narrow_thread_switches() -> Iterator[None]:
    """Threads take turns far more often than by default, so a race between requests shows within seconds."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def test_job_a_token_racing_job_bs_own_runner_never_reads_job_bs_spec(
    api_url: str,
    narrow_thread_switches: None,
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
) -> None:
    _, _, job_a, job_b = matrix_build
    spec_of_b = f"{api_url}/api/runner/jobs/{job_b.job_id}"

    def as_token(token: str) -> Callable[[requests.Session], int]:
        return lambda session: (
            session.get(spec_of_b, headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code
        )

    runners = {f"B's runner {n}": as_token(job_b.token.token) for n in range(RACERS)}
    attackers = {f"A's token {n}": as_token(job_a.token.token) for n in range(RACERS)}
    statuses = hammer({**runners, **attackers})

    assert set(sum((statuses[name] for name in attackers), Counter())) == {401}, statuses  # never B's spec (secrets)
    assert set(sum((statuses[name] for name in runners), Counter())) == {200}, statuses  # nor a 401 that stops B


def test_concurrent_runners_never_store_each_others_log_lines(
    api_url: str, matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob]
) -> None:
    _, _, job_a, job_b = matrix_build
    next_chunk = itertools.cycle(range(runner_calls.MAX_LOG_CHUNK + 1))  # a chunk sent again replaces it

    def put_chunk(job: ClaimedJob, body: bytes, fixed: int | None = None) -> Callable[[requests.Session], int]:
        def put(session: requests.Session) -> int:
            index = fixed if fixed is not None else next(next_chunk)
            url = f"{api_url}/api/runner/jobs/{job.job_id}/log/{index}"
            headers = {"Authorization": f"Bearer {job.token.token}", "Content-Type": "application/octet-stream"}
            return session.put(url, data=body, headers=headers, timeout=10).status_code

        return put

    statuses = hammer(
        {"A": put_chunk(job_a, b"job A's own line\n"), "B": put_chunk(job_b, b"job B's secret line\n", fixed=0)},
        each=100,
    )

    assert set(statuses["A"]) == set(statuses["B"]) == {204}, statuses
    assert set(log_chunks(job_a.job_id)) == {b"job A's own line\n"}
    assert set(log_chunks(job_b.job_id)) == {b"job B's secret line\n"}


def test_requests_without_a_key_racing_the_owners_never_act_as_the_owner(
    account: Account, api_url: str, narrow_thread_switches: None
) -> None:
    def users(key: str | None) -> Callable[[requests.Session], int]:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        return lambda session: session.get(f"{api_url}/api/users", headers=headers, timeout=10).status_code

    owners = {f"owner {n}": users(account.key) for n in range(RACERS)}
    anonymous = {f"anonymous {n}": users(None) for n in range(RACERS)}
    statuses = hammer({**owners, **anonymous})

    assert set(sum((statuses[name] for name in anonymous), Counter())) == {401}, statuses  # never the owner's answer
    assert set(sum((statuses[name] for name in owners), Counter())) == {200}, statuses  # nor a 401 for the owner


# --- what a hostile runner sends with its own token: refused with a 400, never a 500, and nothing stored -------


def test_a_message_or_test_too_big_to_store_is_a_400(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], account: Account
) -> None:
    project, queued, job, _ = matrix_build
    caller = runner(account, job.token.token)
    huge = {f"field{n}": "x" * 60_000 for n in range(7)}  # under the body limit, over a stored item's

    message = caller.post(
        f"/{job.job_id}/messages", {"messages": [{"kind": "message", "category": "error", "message": "big", **huge}]}
    )
    test = caller.post(f"/{job.job_id}/tests", {"tests": [{"testName": "big", "outcome": "Passed", **huge}]})
    grown = [
        caller.put(f"/{job.job_id}/tests", {"tests": [{"testName": "grows", f"field{n}": "x" * 60_000}]}).status
        for n in range(3)
    ]

    assert (message.status, test.status) == (400, 400), (message.body, test.body)
    assert grown == [204, 400, 400]  # an update that would make it too big is refused, not stored
    assert project.account.api.get(f"/buildjobs/{job.job_id}/messages").json == []


@pytest.mark.parametrize(
    ("path", "report"),
    [
        ("/tests", {"testName": "\ud800", "outcome": "Failed"}),
        ("/tests", {"testName": "named", "outcome": "Failed", "ErrorMessage": "a \udfff b"}),
        ("/messages", {"kind": "message", "category": "error", "message": "m", "\ud800": "field name"}),
    ],
)
def test_a_report_of_text_utf_8_cannot_carry_is_a_400_that_takes_none_of_the_jobs_quota(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
    account: Account,
    path: str,
    report: dict[str, Any],
) -> None:
    """JSON's \\ud800 (a lone surrogate) named no test a key could be made of: the call was a 500, after the job's
    quota had been taken for it. None of a report's text may hold one."""
    project, _, job, _ = matrix_build
    field = "tests" if path == "/tests" else "messages"

    reply = runner(account, job.token.token).post(f"/{job.job_id}{path}", {field: [report]})

    assert reply.status == 400, reply.body
    assert "surrogate" in reply.json["message"]
    assert project.account.api.get(f"/buildjobs/{job.job_id}/{field}").json == []
    stored = JobModel.get(job.job_id, consistent_read=True)
    assert (stored.reports, stored.report_bytes) == (None, None)


def test_a_finish_whose_message_holds_a_lone_surrogate_is_a_400_and_the_job_runs_on(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], account: Account
) -> None:
    """It was a 500 from the job's move (DynamoDB stores no such text), its log sealed already."""
    project, queued, job, _ = matrix_build
    caller = runner(account, job.token.token)
    finish = {"result": "failed", "message": "Command exited \ud800", "logChunks": 0, "artifacts": []}

    reply = caller.post(f"/{job.job_id}/finish", finish)

    assert reply.status == 400, reply.body
    assert "message" in reply.json["message"] and "surrogate" in reply.json["message"]
    assert caller.post(f"/{job.job_id}/heartbeat").status == 200
    assert caller.post(f"/{job.job_id}/finish", {**finish, "message": "Command exited"}).status == 204


def test_a_cache_entry_is_uploaded_to_its_signed_url_and_found_again_by_its_id(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], api_url: str, tmp_path: Path
) -> None:
    _, _, claimed, _ = matrix_build
    job = job_store.get_job(claimed.job_id)
    assert job is not None

    upload = runner_cache.cache_upload(job, ENTRY_ID, 7, {"checksum": "c0ffee"})
    put = requests.put(upload["url"], data=b"cached!", headers=upload["headers"], timeout=10)
    entries = runner_cache.cache_entries(job, [ENTRY_ID, "fedcba9876543210"])["entries"]

    assert put.status_code == 200, put.text
    assert entries["fedcba9876543210"] is None  # never saved
    assert entries[ENTRY_ID]["metadata"]["checksum"] == "c0ffee"
    assert requests.get(entries[ENTRY_ID]["downloadUrl"], timeout=10).content == b"cached!"
    as_runner = RemoteCache(JobClient(Ticket(api_url, claimed.job_id, claimed.token.token)))  # over the protocol
    assert as_runner.metadata([ENTRY_ID]) == {ENTRY_ID: {"checksum": "c0ffee"}}
    assert as_runner.download(ENTRY_ID, tmp_path / "entry.tgz") and (tmp_path / "entry.tgz").read_bytes() == b"cached!"
    assert as_runner.download("fedcba9876543210", tmp_path / "other.tgz") is False
    with pytest.raises(Invalid, match="16 hexadecimal digits"):
        runner_cache.cache_upload(job, "../other/entry", 7, {})
    with pytest.raises(Invalid, match="at most"):
        runner_cache.cache_upload(job, ENTRY_ID, runner_cache.MAX_CACHE_ENTRY_BYTES + 1, {})


def test_a_jobs_cache_save_is_bounded_in_bytes_and_its_log_says_what_was_not_saved(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
    api_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Entries uploaded one after another (each within 3 GiB, the job's disk holding one at a time) stop at the
    job's total: the service refuses the upload past it, and the runner says the entry is not saved."""
    _, _, claimed, _ = matrix_build
    job = job_store.get_job(claimed.job_id)
    assert job is not None
    monkeypatch.setattr(runner_cache, "MAX_CACHE_BYTES_PER_JOB", 200)
    runner_cache.cache_upload(job, "1" * 16, 150, {})
    with pytest.raises(Conflict, match="at most 200 bytes of build cache"):
        runner_cache.cache_upload(job, "2" * 16, 51, {})

    build = tmp_path / "build"
    (build / "deps").mkdir(parents=True)
    (build / "deps" / "lib.txt").write_text("a dependency\n")
    said: list[str] = []
    as_runner = RemoteCache(JobClient(Ticket(api_url, claimed.job_id, claimed.token.token)))
    save_cache(build, ["deps"], as_runner, said.append)

    assert any("'deps' is not saved: A job saves at most 200 bytes" in line for line in said), said
    assert cache_entry_metadata(runner_cache._cache_key(job, "2" * 16)) is None


def test_a_projects_cache_keeps_its_newest_entries_within_its_total(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job whose name changed left its old folder behind: a later save's prune drops the project's oldest
    entries past the project's total, never the saving job's own."""
    _, _, first, second = matrix_build
    old, saving = job_store.get_job(second.job_id), job_store.get_job(first.job_id)
    assert old is not None and saving is not None
    monkeypatch.setattr(runner_cache, "MAX_PROJECT_CACHE_BYTES", 10)
    for job in (old, saving):
        upload = runner_cache.cache_upload(job, ENTRY_ID, 7, {})
        assert requests.put(upload["url"], data=b"cached!", headers=upload["headers"], timeout=10).status_code == 200

    assert runner_cache.cache_prune(saving, [ENTRY_ID]) == 0

    assert cache_entry_metadata(runner_cache._cache_key(saving, ENTRY_ID)) is not None
    assert cache_entry_metadata(runner_cache._cache_key(old, ENTRY_ID)) is None


@pytest.mark.parametrize("version", ["1.0.1\nStatus: forged", "<b>1.0</b>", "x" * 129, ""])
def test_a_version_of_other_characters_is_a_400(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], account: Account, version: str
) -> None:
    project, queued, job, _ = matrix_build

    reply = runner(account, job.token.token).put(f"/{job.job_id}/build", {"version": version})

    assert reply.status == 400
    assert project.build(queued["version"])["version"] == queued["version"]


def test_a_version_differing_only_in_case_changes_nothing(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob], account: Account
) -> None:
    project, queued, job, _ = matrix_build
    caller = runner(account, job.token.token)

    assert caller.put(f"/{job.job_id}/build", {"version": "2.0.0-Beta"}).status == 204
    assert caller.put(f"/{job.job_id}/build", {"version": "2.0.0-BETA"}).status == 204
    assert project.build("2.0.0-Beta")["buildId"] == queued["buildId"]


def test_a_job_keeps_a_bounded_number_of_reports(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
    account: Account,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, queued, job, _ = matrix_build
    monkeypatch.setattr(job_reports, "MAX_REPORTS_PER_JOB", 3)
    caller = runner(account, job.token.token)

    def message(text: str) -> dict[str, Any]:
        return {"kind": "message", "category": "information", "message": text}

    answers = [
        caller.post(f"/{job.job_id}/messages", {"messages": [message("one"), message("two")]}).status,
        caller.post(f"/{job.job_id}/messages", {"messages": [message("three"), message("four")]}).status,
        caller.post(f"/{job.job_id}/tests", {"tests": [{"testName": "three", "outcome": "Passed"}]}).status,
        caller.post(f"/{job.job_id}/tests", {"tests": [{"testName": "four", "outcome": "Passed"}]}).status,
    ]

    assert answers == [204, 409, 204, 409]
    listed = project.account.api.get(f"/buildjobs/{job.job_id}/messages").json
    assert [entry["message"] for entry in listed] == ["one", "two"]


def test_a_job_keeps_a_bounded_number_of_report_bytes(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
    account: Account,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A build that reports few but big tests (failed: each left a mark too) is held by the bytes they store, not
    only by their count: past the cap the call is a 409 naming it, and nothing of it is stored."""
    project, queued, job, _ = matrix_build
    monkeypatch.setattr(job_reports, "MAX_REPORT_BYTES_PER_JOB", 8_000)
    caller = runner(account, job.token.token)

    def failed(name: str) -> dict[str, Any]:
        return {"testName": name, "outcome": "Failed", "ErrorMessage": "m" * 1_500, "ErrorStackTrace": "s" * 1_500}

    answers = [caller.post(f"/{job.job_id}/tests", {"tests": [failed(f"t{index}")]}) for index in range(3)]

    assert [answer.status for answer in answers] == [204, 204, 409]
    assert "8,000 bytes" in answers[2].json["message"]
    listed = project.account.api.get(f"/buildjobs/{job.job_id}/tests").json
    assert sorted(test["testName"] for test in listed) == ["t0", "t1"]


def test_a_job_stored_before_the_byte_quota_has_used_none_of_it(
    matrix_build: tuple[BuildProject, dict[str, Any], ClaimedJob, ClaimedJob],
    account: Account,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, queued, job, _ = matrix_build
    monkeypatch.setattr(job_reports, "MAX_REPORT_BYTES_PER_JOB", 1_000)
    JobModel(job.job_id).update(actions=[JobModel.reports.set(5)])  # counted, as before the byte quota: no bytes
    caller = runner(account, job.token.token)

    reply = caller.post(f"/{job.job_id}/tests", {"tests": [{"testName": "adds", "outcome": "Passed"}]})

    assert reply.status == 204, reply.body
    stored = JobModel.get(job.job_id, consistent_read=True)
    assert (stored.reports, 0 < stored.report_bytes < 1_000) == (6, True)


def test_a_jobs_runner_gets_its_repositorys_credentials_once(account: Account, tmp_path: Path) -> None:
    user, password = "deploy-bot", "s3cret-clone-token"
    with GitServer(tmp_path, credentials=(user, password)) as server:
        Repository.create(server.root, "private.git").commit({"appveyor.yml": MATRIX_YML})
        body = {
            "repositoryProvider": "git",
            "repositoryName": server.url_of("private.git"),
            "repositoryAuthentication": "credentials",
            "repositoryUsername": user,
            "repositoryPassword": password,
        }
        project = account.api.post("/projects", body).json
        queued = account.api.post("/builds", {"accountName": project["accountName"], "projectSlug": project["slug"]})
    assert queued.status == 200, queued.body
    path = f"/projects/{project['accountName']}/{project['slug']}/build/{queued.json['version']}"
    job_id = account.api.get(path).json["build"]["jobs"][0]["jobId"]
    token = mint_token()
    assert job_moves.claim_job(job_id, int(time.time()) + 120, token.token_hash)
    runner = Caller(account.client, token.token, prefix="/api/runner/jobs")

    spec = runner.get(f"/{job_id}")
    first = runner.post(f"/{job_id}/clone-credentials")
    second = runner.post(f"/{job_id}/clone-credentials")  # a build script that got hold of the token, say

    assert password not in spec.body.decode() and spec.json["source"]["credentials"] is True
    assert (first.status, first.json) == (200, {"username": user, "password": password})
    assert second.status == 409 and password not in second.body.decode()
