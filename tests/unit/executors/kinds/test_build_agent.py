"""Build agents as an executor kind: the service starts none of their jobs, a job's log names the team's machine it
runs on, and nothing on the service's side refuses their jobs. No IO."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.jobs import Executor, Job
from chalicelib.executors.kind import LEASE_EXPIRED
from chalicelib.executors.kinds.build_agent import BUILD_AGENT
from chalicelib.protocol.ticket import Ticket


def job(agent: str | None) -> Job:
    created = datetime.now(UTC)
    return Job("job-1", 5, 2, 1, 1, "Image: win", {}, False, "running", created, executor=Executor.AGENT, agent=agent)


def test_a_job_on_a_build_agent_names_the_agent_first_in_its_log() -> None:
    assert BUILD_AGENT.runner_warnings(job("build-01")) == ["Running on build agent build-01."]
    assert BUILD_AGENT.runner_warnings(job(None)) == []  # not taken yet: nothing to name


def test_the_service_never_starts_an_agents_job() -> None:
    with pytest.raises(TypeError, match="taken by the agent"):
        BUILD_AGENT.start(job(None), Ticket("https://ci.example.com", "job-1", "t0ken"))


def test_an_agents_job_is_refused_by_nothing_here_and_ends_when_its_lease_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONVEYOR_CODEBUILD_PROJECT", "")
    monkeypatch.setenv("CONVEYOR_UNSAFE_NO_SANDBOX", "")

    assert BUILD_AGENT.refusal("Visual Studio 2022") is None
    assert BUILD_AGENT.lost_reason(job("build-01"), 0) == LEASE_EXPIRED
    assert BUILD_AGENT.stop(job("build-01")) is False  # the agent's runner stops it at its next heartbeat


def test_an_agents_job_has_the_stages_limit_not_the_runner_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_TIMEOUT_SECONDS", "7200")
    monkeypatch.setenv("CONVEYOR_RUNNER_TIMEOUT_SECONDS", "840")

    assert BUILD_AGENT.job_timeout() == 7200
