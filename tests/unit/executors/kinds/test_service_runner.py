"""The service's runner as an executor kind: its limit is the runner's, it runs a job here to its end (saying whether
the runner left it unfinished) or hands it to the runner function, and says where a job runs outside the image. The
Lambda client is botocore's own, stubbed; the local runner is not started (executors.run answers)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest
from botocore.stub import Stubber

from chalicelib import aws, executors
from chalicelib.core.jobs import Executor, Job
from chalicelib.executors.kinds.service_runner import SERVICE_RUNNER
from chalicelib.protocol.ticket import Ticket

TICKET = Ticket("https://ci.example.com", "job-1", "t0ken")


def job(image: str | None = None) -> Job:
    return Job(
        "job-1", 5, 2, 1, 1, "Image: x", {}, False, "running", datetime.now(UTC), executor=Executor.RUNNER, run_on=image
    )


@pytest.fixture
def lambda_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    monkeypatch.setenv("CONVEYOR_EXECUTOR", "lambda")
    monkeypatch.setenv("CONVEYOR_RUNNER_FUNCTION", "conveyor-prod-runner")
    client = boto3.client("lambda", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    monkeypatch.setitem(aws._clients, "lambda", client)
    with Stubber(client) as stubber:
        yield stubber


def test_a_job_on_the_service_runner_has_no_more_time_than_the_runner_can_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_TIMEOUT_SECONDS", "3600")
    monkeypatch.setenv("CONVEYOR_RUNNER_TIMEOUT_SECONDS", "840")

    assert SERVICE_RUNNER.job_timeout() == 840

    monkeypatch.setenv("CONVEYOR_RUNNER_TIMEOUT_SECONDS", "0")  # no cap: the local runner
    assert SERVICE_RUNNER.job_timeout() == 3600


def test_on_the_lambda_stage_a_job_is_handed_to_the_runner_function_and_nothing_waits_for_it(
    lambda_calls: Stubber,
) -> None:
    lambda_calls.add_response(
        "invoke",
        {"StatusCode": 202},
        {"FunctionName": "conveyor-prod-runner", "InvocationType": "Event", "Payload": TICKET.to_json().encode()},
    )

    started = SERVICE_RUNNER.start(job(), TICKET)

    lambda_calls.assert_no_pending_responses()
    assert started.runner_ended is False and started.external_id is None and started.refused is None
    assert SERVICE_RUNNER.refusal() is None  # nothing on this machine to check


@pytest.mark.parametrize(("exit_code", "unfinished"), [(0, False), (1, True), (-9, True), (None, True)])
def test_a_local_runner_that_exits_other_than_0_may_have_left_its_job_unfinished(
    monkeypatch: pytest.MonkeyPatch, exit_code: int | None, unfinished: bool
) -> None:
    monkeypatch.setenv("CONVEYOR_EXECUTOR", "local")
    handed: list[tuple[Ticket, str | None]] = []
    monkeypatch.setattr(executors, "run", lambda ticket, image=None: handed.append((ticket, image)) or exit_code)

    started = SERVICE_RUNNER.start(job("Ubuntu2204"), TICKET)

    assert handed == [(TICKET, "Ubuntu2204")]
    assert (started.runner_ended, started.exit_code) == (unfinished, exit_code)


def test_a_job_outside_a_container_of_the_image_says_where_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_EXECUTOR", "local")
    monkeypatch.setenv("CONVEYOR_CONTAINERS", "off")
    assert "in the unshare sandbox" in str(SERVICE_RUNNER.outside_image(job("Ubuntu2204")))

    monkeypatch.setenv("CONVEYOR_EXECUTOR", "lambda")
    assert "on the runner function" in str(SERVICE_RUNNER.outside_image(job()))


def test_the_service_runners_job_is_warned_of_nothing_and_gets_its_runner_from_the_service() -> None:
    assert SERVICE_RUNNER.runner_warnings(job()) == []
    assert SERVICE_RUNNER.fetches_runner is False and SERVICE_RUNNER.runner_in_users_image("Ubuntu2204") is False
