"""CodeBuild as an executor kind: a job starts a build with the stage's limit, a refusal says what CodeBuild
answered, a job whose lease ran out is what CodeBuild says of its build, a cancelled one's build is stopped, and a
pull request's runner in an image of its author's choosing is told apart. The CodeBuild client is botocore's own,
stubbed (its calls checked against CodeBuild's API model); nothing is sent."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest
from botocore.stub import ANY, Stubber

from chalicelib import aws
from chalicelib.core.jobs import Executor, Job
from chalicelib.executors.kind import LEASE_EXPIRED
from chalicelib.executors.kinds.codebuild import CODEBUILD
from chalicelib.protocol.ticket import Ticket

BUILD_ID = "builds:0f0e0d0c"
TICKET = Ticket("https://ci.example.com", "job-1", "t0ken")


def job(external_id: str | None = BUILD_ID, started: datetime | None = None, image: str = "python:3.12") -> Job:
    created = datetime.now(UTC)
    return Job(
        "job-1", 5, 2, 1, 1, "Image: python", {}, False, "running", created, attempts=2,
        executor=Executor.CODEBUILD, run_on=image, external_id=external_id, started=started or created,
    )  # fmt: skip


@pytest.fixture
def codebuild_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    monkeypatch.setenv("CONVEYOR_CODEBUILD_PROJECT", "conveyor-prod-builds")
    client = boto3.client("codebuild", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    monkeypatch.setitem(aws._clients, "codebuild", client)
    with Stubber(client) as stubber:
        yield stubber


def states(status: str, phase: str) -> dict[str, object]:
    return {"builds": [{"id": BUILD_ID, "buildStatus": status, "currentPhase": phase}]}


def test_only_a_stage_with_a_codebuild_project_runs_codebuilds_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVEYOR_CODEBUILD_PROJECT", raising=False)
    assert "no CodeBuild project is set (CONVEYOR_CODEBUILD_PROJECT)" in str(CODEBUILD.refusal("python:3.12"))

    monkeypatch.setenv("CONVEYOR_CODEBUILD_PROJECT", "conveyor-prod-builds")
    assert CODEBUILD.refusal("python:3.12") is None


def test_a_job_starts_a_build_of_its_image_within_the_stages_limit_not_the_runner_functions(
    codebuild_calls: Stubber, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_TIMEOUT_SECONDS", "1800")
    monkeypatch.setenv("CONVEYOR_RUNNER_TIMEOUT_SECONDS", "840")
    expected = {
        "projectName": "conveyor-prod-builds", "imageOverride": "python:3.12", "timeoutInMinutesOverride": 32,
        "idempotencyToken": "job-1-2", "sourceTypeOverride": ANY, "buildspecOverride": ANY,
        "environmentTypeOverride": ANY, "computeTypeOverride": ANY, "privilegedModeOverride": False,
        "queuedTimeoutInMinutesOverride": ANY, "environmentVariablesOverride": ANY,
    }  # fmt: skip
    codebuild_calls.add_response("start_build", {"build": {"id": BUILD_ID}}, expected)

    started = CODEBUILD.start(job(external_id=None), TICKET)

    codebuild_calls.assert_no_pending_responses()
    assert (started.external_id, started.refused, started.runner_ended) == (BUILD_ID, None, False)


def test_a_build_codebuild_will_not_start_is_the_jobs_failure_naming_codebuilds_answer(
    codebuild_calls: Stubber,
) -> None:
    codebuild_calls.add_client_error("start_build", service_error_code="AccountLimitExceededException")

    started = CODEBUILD.start(job(external_id=None), TICKET)

    assert started.external_id is None
    assert started.refused == (
        "AWS CodeBuild did not start the job's build (AccountLimitExceededException); the service's log says more."
    )


def test_a_job_whose_build_is_still_provisioning_goes_on_and_one_whose_build_ended_is_lost(
    codebuild_calls: Stubber,
) -> None:
    codebuild_calls.add_response("batch_get_builds", states("IN_PROGRESS", "PROVISIONING"), {"ids": [BUILD_ID]})
    codebuild_calls.add_response("batch_get_builds", states("FAILED", "DOWNLOAD_SOURCE"), {"ids": [BUILD_ID]})

    assert CODEBUILD.lost_reason(job(), int(time.time())) is None
    assert f"build {BUILD_ID} ended FAILED in its DOWNLOAD_SOURCE phase" in str(CODEBUILD.lost_reason(job(), 0))


def test_a_job_whose_build_id_was_never_noted_is_lost_as_any_runner_that_went_silent(codebuild_calls: Stubber) -> None:
    assert CODEBUILD.lost_reason(job(external_id=None), int(time.time())) == LEASE_EXPIRED  # CodeBuild is not asked


def test_when_codebuild_cannot_be_asked_a_job_goes_on_until_its_build_cannot_be_running_any_more(
    codebuild_calls: Stubber,
) -> None:
    for _ in range(2):
        codebuild_calls.add_client_error("batch_get_builds", service_error_code="AccessDeniedException")
    now = int(time.time())

    assert CODEBUILD.lost_reason(job(started=datetime.fromtimestamp(now - 60, UTC)), now) is None
    long_ago = datetime.fromtimestamp(now - 3 * 24 * 3600, UTC)
    assert "could not be asked about the job's build" in str(CODEBUILD.lost_reason(job(started=long_ago), now))


def test_a_cancelled_jobs_build_is_stopped_and_the_job_ends_with_it(codebuild_calls: Stubber) -> None:
    codebuild_calls.add_response("stop_build", {}, {"id": BUILD_ID})

    assert CODEBUILD.stop(job()) is True
    codebuild_calls.assert_no_pending_responses()


def test_a_stop_codebuild_refuses_or_of_a_build_not_noted_yet_is_left_to_the_runners_heartbeat(
    codebuild_calls: Stubber,
) -> None:
    codebuild_calls.add_client_error("stop_build", service_error_code="AccessDeniedException")

    assert CODEBUILD.stop(job()) is False
    assert CODEBUILD.stop(job(external_id=None)) is False  # no call: nothing is pending
    codebuild_calls.assert_no_pending_responses()


def test_a_runner_in_an_image_of_the_users_choosing_is_told_apart_from_the_curated_and_conveyors_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONVEYOR_IMAGE_REPOSITORY", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/conveyor")
    own = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/conveyor:ubuntu2204"

    assert CODEBUILD.runner_in_users_image("python:3.12") is True
    assert CODEBUILD.runner_in_users_image("aws/codebuild/standard:7.0") is False
    assert CODEBUILD.runner_in_users_image(own) is False
    assert CODEBUILD.outside_image(job(image=own)) is None  # Conveyor's image: stack: and services: apply
    assert CODEBUILD.outside_image(job(image="python:3.12")) == "in the container image python:3.12 (CodeBuild's)"
    assert CODEBUILD.fetches_runner is True  # the image has no runner: the job fetches it with its ticket
