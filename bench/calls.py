"""AWS calls per request: every read endpoint, at 10 and at 1,000 projects, users, environments, builds and tests
(each of 100 runs).

The app runs in this process (Chalice's test client, the same gateway emulation as ``chalice local``) against
the embedded emulator; botocore's event hooks count each request's DynamoDB and S3 calls. Each endpoint is read
twice and the second read is counted: a warm function, whose key lookup is cached for a short time
(``domain/shared/warm_cache.py``; here for a minute rather than ten seconds, since the emulator takes seconds to read
1,000 items where DynamoDB takes milliseconds). ``BENCH_TRACE=1`` prints each counted call with the tables it read.

Then one build of a one-line job: its start, its dispatch by the jobs queue's handler (called here as the pump
calls it: the local executor runs the job's runner in its sandbox, which talks to the app served over HTTP on
loopback), and, counted apart by route, the AWS calls the service makes to answer each job protocol call of the
runner (its log, shorter than a chunk and done before the first 2 s flush, rides on its finish); then the
heartbeats of a job that sleeps a second. The runner itself makes none: it holds no AWS credentials, only its
job token (and, for artifacts and cache, which these jobs have none of, presigned S3 URLs).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import Figure, Section
from bench.awscalls import CallCounter, Calls
from bench.served import served_api

SIZES = tuple(int(size) for size in os.environ.get("BENCH_SIZES", "10,1000").split(","))
MAX_DYNAMODB_CALLS = 3
QUERY_PAGE_BYTES = 1024 * 1024
DEPLOYMENTS = 25  # more than a page of a deployments list
TEST_RUNS = 100  # each of a project's tests (issue 38): the tests list reads one summary per test, whatever its runs
HEARTBEAT_SECONDS = 0.25  # of the job whose heartbeats are counted (5 s by default)
HEARTBEAT = "POST /api/runner/jobs/{jobId}/heartbeat"
LOG_FLUSH = "PUT /api/runner/jobs/{jobId}/log/{index}"
BUILD_DYNAMODB_CALLS = 8  # issue 24's targets for a one-job build: about 4 writes is the floor
BUILD_S3_CALLS = 3  # the log's included


@dataclass
class Seeded:
    """What one size's account holds, and where to find one of each thing."""

    size: int
    key: str
    paths: dict[str, str]  # endpoint (as the OpenAPI document names it) -> a concrete path


def run() -> Section:
    reads, *build = (paragraph.replace("\n", " ") for paragraph in __doc__.strip().split("\n\n")[1:])
    target = (
        f" Target: no Scan; at most {MAX_DYNAMODB_CALLS} DynamoDB calls per read, the same at 1,000 as at 10;"
        " a list reads one Query page per 1 MB it returns."
    )
    section = Section("AWS calls per request", "\n\n".join([reads + target, *build]))
    from chalicelib.domain.shared import warm_cache

    warm_cache.REUSE_SECONDS = 60.0
    with _in_process() as (client, counter, server):
        seeded = [_seed(client, server, size) for size in SIZES]
        for endpoint in seeded[0].paths:
            counts = [_count(client, counter, seed.paths[endpoint], seed) for seed in seeded]
            section.figures.append(_figure(endpoint, counts))
        section.figures += _build_lifecycle(client, counter, server)
    return section


def _build_lifecycle(client: Any, counter: CallCounter, server: Any) -> list[Figure]:
    """What one build of one one-line job costs, phase by phase: its start request (queue), its dispatch (the jobs
    queue's handler, called as the pump calls it: claim, token, executor), and each job protocol call of its
    runner, which the service answers (its spec, any log flush, its finish, which carries the log's last chunk, and
    the build's summary); then what the build's announcement costs once it has succeeded, and what a heartbeat
    costs, from a longer job."""
    from tests.builds import BuildProject
    from tests.support import new_account

    built = BuildProject(new_account(client), server, {"appveyor.yml": "build_script:\n  - echo hello\n"})
    built.start()  # the first start of a project reads its repository's refs afresh; count a later one
    _drain_notifications()
    with counter.counting() as start_calls:
        version = built.start()["version"]
    run_calls, seconds = _run_job(counter, built.build(version)["jobs"][0]["jobId"])
    status = built.build(version)["status"]
    announcement = _receive_notifications()  # received apart: Lambda's poller, not the function, receives them
    with counter.counting() as announced:
        _handle_notifications(announcement)
    if os.environ.get("BENCH_TRACE"):
        print("bench: POST /builds:", *start_calls.trace, sep="\n  ", flush=True)
        print("bench: running the job:", *run_calls.trace, sep="\n  ", flush=True)
        print("bench: its announcement:", *announced.trace, sep="\n  ", flush=True)
    figures = [
        Figure("Queue: POST /builds (one job)", start_calls.everything()),
        Figure(
            "Claim: the jobs queue's handler (claim, token, executor), runner calls aside",
            run_calls.unlabelled().everything(),
        ),
    ]
    for label, times in run_calls.labelled.items():  # in the order the runner first called each
        calls = run_calls.labels.get(label, Calls()).everything()
        figures.append(Figure(f"Its runner's {label} ({_times(times)})", calls))
    flushes = run_calls.labelled[LOG_FLUSH]
    beats = run_calls.labels.get(HEARTBEAT, Calls())
    build = Calls(start_calls.operations + run_calls.operations - beats.operations)  # heartbeats aside
    dynamodb, s3 = build.of("dynamodb"), build.of("s3")
    figures += [
        Figure(
            f"The build in all, POST to {status} (echo hello, {seconds:.1f} s), heartbeats aside: DynamoDB",
            f"{dynamodb}",
            f"≤ {BUILD_DYNAMODB_CALLS}",
            dynamodb <= BUILD_DYNAMODB_CALLS,
        ),
        Figure(
            f"… S3, its log included ({_times(flushes)} to flush it; its last chunk rides on the finish)",
            build.describe("s3"),
            f"≤ {BUILD_S3_CALLS}",
            s3 <= BUILD_S3_CALLS,
        ),
        Figure("After success: its announcement (notifications, statuses, inline deployments)", announced.everything()),
    ]

    sleeper = BuildProject(built.account, server, {"appveyor.yml": "build_script:\n  - sleep 1\n"})
    sleeper_job = sleeper.build(sleeper.start()["version"])["jobs"][0]["jobId"]
    slept, _ = _run_job(counter, sleeper_job, heartbeat_seconds=HEARTBEAT_SECONDS)
    times = slept.labelled[HEARTBEAT]
    beats = slept.labels.get(HEARTBEAT, Calls())
    writes = beats.operations["dynamodb.UpdateItem"] + beats.operations["dynamodb.PutItem"]
    measure = f"Heartbeats of a job sleeping 1 s, renewing its lease every {HEARTBEAT_SECONDS} s ({_times(times)})"
    per_beat = times > 0 and beats.of("dynamodb") == writes <= times and beats.of("s3") == 0
    figures.append(Figure(measure, beats.everything(), "one write each, nothing else", per_beat))
    return figures


def _drain_notifications() -> None:
    """Empty the notifications queue of earlier builds' messages, so that only the counted build's are handled."""
    while _receive_notifications():
        pass


def _handle_notifications(messages: list[dict[str, Any]]) -> None:
    """The notifications queue's handler, called as the pump calls it, for these messages."""
    from chalice.app import SQSEvent
    from chalice.local import LambdaContext

    from chalicelib.local.pump import sqs_event
    from chalicelib.workers.notifications import send_notifications

    arn = "arn:aws:sqs:us-east-1:123456789012:notifications"
    context = LambdaContext("send_notifications", memory_size=128, max_runtime_ms=60_000)
    send_notifications(SQSEvent(sqs_event(arn, messages), context))


def _receive_notifications() -> list[dict[str, Any]]:
    """The messages waiting on the notifications queue (up to ten), received and deleted."""
    from chalicelib import aws
    from chalicelib.config import settings

    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=settings().notifications_queue)["QueueUrl"]
    messages: list[dict[str, Any]] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return messages


def _run_job(counter: CallCounter, job_id: str, heartbeat_seconds: float | None = None) -> tuple[Calls, float]:
    """The calls of the jobs queue's handler for a queued job's message, called as the pump calls it (it returns
    once the job's runner has ended), and how long it took."""
    from chalice.app import SQSEvent
    from chalice.local import LambdaContext

    from chalicelib.local.pump import sqs_event
    from chalicelib.workers.jobs import run_jobs

    message = _job_message(job_id)  # received apart: Lambda's poller, not the function, receives it
    arn = "arn:aws:sqs:us-east-1:123456789012:jobs"
    context = LambdaContext("run_jobs", memory_size=128, max_runtime_ms=900_000)
    if heartbeat_seconds is not None:
        os.environ["CONVEYOR_HEARTBEAT_SECONDS"] = str(heartbeat_seconds)
    try:
        started = time.monotonic()
        with counter.counting() as calls:
            run_jobs(SQSEvent(sqs_event(arn, [message]), context))
        return calls, time.monotonic() - started
    finally:
        os.environ.pop("CONVEYOR_HEARTBEAT_SECONDS", None)


def _job_message(job_id: str) -> dict[str, Any]:
    """The jobs queue's message for the job, received and deleted (with those of jobs the bench does not run)."""
    from chalicelib import aws
    from chalicelib.config import settings

    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=settings().jobs_queue)["QueueUrl"]
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            raise RuntimeError(f"the jobs queue has no message for job {job_id}")
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        for message in messages:
            if json.loads(message["Body"]).get("jobId") == job_id:
                return dict(message)


def _times(count: int) -> str:
    return f"{count} {'call' if count == 1 else 'calls'}"


def _figure(endpoint: str, counts: list[tuple[Calls, int]]) -> Figure:
    value = "; ".join(
        f"{size}: DynamoDB {calls.describe('dynamodb')}, S3 {calls.describe('s3')}"
        for size, (calls, _) in zip(SIZES, counts, strict=True)
    )
    allowed = [MAX_DYNAMODB_CALLS - 1 + max(1, -(-read // QUERY_PAGE_BYTES)) for _, read in counts]
    dynamodb = [calls.of("dynamodb") for calls, _ in counts]
    scans = sum(calls.operations["dynamodb.Scan"] for calls, _ in counts)
    met = scans == 0 and all(n <= limit for n, limit in zip(dynamodb, allowed, strict=True))
    target = f"≤ {MAX_DYNAMODB_CALLS}, no Scan" + (
        f" (+1 per MB: {allowed[-1]} at {SIZES[-1]})" if allowed[-1] > MAX_DYNAMODB_CALLS else ""
    )
    return Figure(f"GET {endpoint}", value, target, met)


def _count(client: Any, counter: CallCounter, path: str, seed: Seeded) -> tuple[Calls, int]:
    from tests.support import Caller

    caller = Caller(client, seed.key)
    first = caller.get(path)
    if first.status not in (200, 302):
        raise AssertionError(f"GET {path}: {first.status} {first.body[:300]!r}")
    with counter.counting() as calls:
        caller.get(path)
    if os.environ.get("BENCH_TRACE"):
        print(f"bench: GET {path} at {seed.size}:", *calls.trace, sep="\n  ", flush=True)
    return calls, calls.response_bytes["dynamodb"]


@contextmanager
def _in_process() -> Iterator[tuple[Any, CallCounter, Any]]:
    """The app in this process, for the test client and, over HTTP on loopback, for the runners of its jobs (each
    request of theirs labelled with its route); the emulator and a git server."""
    counter = CallCounter().install()  # before any client exists
    from chalicelib.local.emulator import Emulator

    emulator = Emulator(port=0)
    emulator.start()
    from chalice.test import Client

    from chalicelib.cli import apply_stage_environment

    apply_stage_environment("local")
    from app import app
    from chalicelib.local.resources import ensure_resources
    from tests.gitserver import GitServer

    ensure_resources(app)

    def label(request: Any, get_response: Any) -> Any:
        with counter.labelled(f"{request.method} {request.path}"):
            return get_response(request)

    app.register_middleware(label, "http")
    with (
        served_api() as api_url,
        tempfile.TemporaryDirectory() as root,
        GitServer(Path(root)) as server,
        Client(app, "local") as client,
    ):
        os.environ["CONVEYOR_RUNNER_API_URL"] = api_url  # for dispatch, as ``conveyor local`` sets it
        try:
            yield client, counter, server
        finally:
            app.middleware_handlers.remove((label, "http"))
            os.environ.pop("CONVEYOR_RUNNER_API_URL")
            emulator.stop()
            counter.uninstall()


@contextmanager
def _phase(what: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    print(f"bench: seeded {what} in {time.monotonic() - started:.1f} s", flush=True)


def _seed(client: Any, server: Any, size: int) -> Seeded:
    """One of each thing through the API, then ``size - 1`` copies of each written straight to its table."""
    from app import app
    from chalicelib.local.pump import SqsPump
    from chalicelib.store.accounts import get_account_by_name
    from chalicelib.store.delivery_models import EnvironmentModel
    from chalicelib.store.models import BuildModel, JobModel, MemberModel, ProjectModel
    from tests.builds import BuildProject
    from tests.deployments import add_environment
    from tests.support import new_account, project_path, unique

    account = new_account(client)
    api = account.api
    with _phase(f"{size} projects, users, environments and builds"):
        built = BuildProject(account, server, {"appveyor.yml": "build_script:\n  - echo hello\n"})
        account.add_user(f"{unique('user')}@example.com")
        environment = add_environment(account, "Webhook", {"url": "http://127.0.0.1:9/hook"})
        pump = SqsPump(app, max_concurrency=1)  # the first build runs, to have a successful build to deploy
        pump.start()
        succeeded = built.run(branch="master")
        pump.stop()
        queued = built.start(branch="master")
        account_id = get_account_by_name(account.name).account_id  # type: ignore[union-attr]
        base = 10_000_000 * size  # ids of the copies stay clear of the counters' and of the other size's
        _clone(
            ProjectModel.get(account_id, built.project["slug"]),
            size - 1,
            lambda n: {"slug": f"seed-{n}", "name": f"seed-{n}", "project_id": base + n, "last_build": None},
        )
        member = next(m for m in MemberModel.query(account_id) if not m.is_owner)
        _clone(
            member,
            size - 2,
            lambda n: {"user_id": base + n, "email": f"seed-{n}@example.com", "email_key": f"seed-{n}@example.com"},
        )
        _clone(
            EnvironmentModel.get(account_id, environment["deploymentEnvironmentId"]),
            size - 1,
            lambda n: {"environment_id": base + n, "name": f"seed-{n}"},
        )
        template = BuildModel.get(built.project["projectId"], queued["buildId"])
        job = JobModel.get(template.job_ids[0])
        _clone(job, size - 2, lambda n: {"job_id": f"seed{base + n}", "build_id": base + n})
        _clone(
            template,
            size - 2,
            lambda n: {
                "build_id": base + n,
                "build_number": base + n,
                "version": f"seed.{n}",
                "job_ids": [f"seed{base + n}"],
            },
        )
    with _phase(f"{size} tests of {TEST_RUNS} runs each"):  # as job finishes write them (store/tests_history.py)
        from tests.history_seed import seed_tests

        test_ids = seed_tests(built.project["projectId"], tests=size, runs=TEST_RUNS)
    with _phase(f"{DEPLOYMENTS} deployments"):
        deployments = [
            api.post(
                "/deployments",
                {
                    "environmentName": environment["name"],
                    "accountName": account.name,
                    "projectSlug": built.project["slug"],
                    "buildVersion": succeeded["version"],
                },
            ).json
            for _ in range(DEPLOYMENTS)
        ]
    user = api.get("/users").json[-1]
    role = api.get("/roles").json[0]
    job_id = succeeded["jobs"][0]["jobId"]
    path = project_path(built.project)
    environment_path = f"/environments/{environment['deploymentEnvironmentId']}"
    return Seeded(
        size,
        account.key,
        {
            "/users": "/users",
            "/users/{userId}": f"/users/{user['userId']}",
            "/collaborators": "/collaborators",
            "/roles": "/roles",
            "/roles/{roleId}": f"/roles/{role['roleId']}",
            "/projects": "/projects",
            "/projects/{accountName}/{projectSlug}": path,
            "/projects/{accountName}/{projectSlug}/branch/{buildBranch}": f"{path}/branch/master",
            "/projects/{accountName}/{projectSlug}/build/{buildVersion}": f"{path}/build/{succeeded['version']}",
            "/projects/{accountName}/{projectSlug}/history": f"{path}/history?recordsNumber=20",
            "/projects/{accountName}/{projectSlug}/deployments": f"{path}/deployments",
            "/projects/{accountName}/{projectSlug}/settings": f"{path}/settings",
            "/projects/{accountName}/{projectSlug}/settings/yaml": f"{path}/settings/yaml",
            "/projects/{accountName}/{projectSlug}/settings/environment-variables": f"{path}/settings/environment-variables",  # noqa: E501
            "/projects/{accountName}/{projectSlug}/tests": f"{path}/tests?sort=slowest",
            "/projects/{accountName}/{projectSlug}/tests/{testId}/history": f"{path}/tests/{test_ids[0]}/history",
            "/buildjobs/{jobId}/log": f"/buildjobs/{job_id}/log",
            "/buildjobs/{jobId}/artifacts": f"/buildjobs/{job_id}/artifacts",
            "/environments": "/environments",
            "/environments/{deploymentEnvironmentId}/settings": f"{environment_path}/settings",
            "/environments/{deploymentEnvironmentId}/deployments": f"{environment_path}/deployments",
            "/deployments/{deploymentId}": f"/deployments/{deployments[-1]['deploymentId']}",
        },
    )


def _clone(template: Any, count: int, change: Any) -> None:
    """``count`` copies of a stored item, each changed by ``change(n)``, written in batches of 25."""
    model = type(template)
    with model.batch_write() as batch:
        for number in range(count):
            item = model.from_raw_data(template.serialize())
            for name, value in change(number).items():
                setattr(item, name, value)
            batch.save(item)
