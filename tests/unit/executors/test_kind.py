"""An executor kind's defaults, what a kind that overrides nothing does: the service's runner's answers. No IO."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.core.jobs import Job
from chalicelib.executors.kind import LEASE_EXPIRED, ExecutorKind, Started
from chalicelib.protocol.ticket import Ticket


class Plain(ExecutorKind):
    """A kind that says only what every kind must."""

    name = "plain"

    def refusal(self, image: str | None = None) -> str | None:
        return None

    def start(self, job: Job, ticket: Ticket) -> Started:
        return Started()


def job(**fields: Any) -> Job:
    return Job("job-1", 5, 2, 1, 1, "Image: x", {"image": "x"}, False, "running", datetime.now(UTC), **fields)


def test_a_kind_must_say_why_it_cannot_run_jobs_and_how_it_starts_one() -> None:
    class Silent(ExecutorKind):
        name = "silent"

    with pytest.raises(TypeError, match="refusal|start"):
        Silent()  # type: ignore[abstract]  # what mypy says too


def test_a_job_of_a_plain_kind_is_lost_when_its_lease_runs_out_and_its_runner_stops_it_when_cancelled() -> None:
    kind = Plain()

    assert kind.lost_reason(job(external_id="run-1"), 0) == LEASE_EXPIRED
    assert kind.stop(job(external_id="run-1")) is False  # the runner stops it at its next heartbeat


def test_a_plain_kind_is_pushed_runs_outside_the_image_with_the_stages_limit_and_says_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_TIMEOUT_SECONDS", "1800")
    monkeypatch.setenv("CONVEYOR_RUNNER_TIMEOUT_SECONDS", "840")  # the service's runner's cap, not another kind's
    kind = Plain()

    assert kind.job_timeout() == 1800
    assert (kind.pulled, kind.provides_setup, kind.fetches_runner, kind.runs_in_service) == (False,) * 4
    assert kind.outside_image(job()) == "elsewhere"
    assert kind.runner_warnings(job(agent="build-01")) == []
    assert kind.runner_in_users_image("python:3.12") is False
