"""A deployment's start request, and what an agent is handed for a deployment job: no IO."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.deployments import Deployment, EnvironmentAtStart
from chalicelib.domain.deployments.deployment_agents import AgentJob
from chalicelib.domain.deployments.deployments import StartRequest
from chalicelib.errors import Invalid
from chalicelib.wire.deployments import agent_job_json, deployment_json, parse_start_request

BODY = {"environmentName": "production", "accountName": "acme", "projectSlug": "app", "buildVersion": "1.0.3"}


def test_a_start_request_reads_the_environment_build_and_variables_as_text() -> None:
    request = parse_start_request({**BODY, "buildJobId": "job-1", "environmentVariables": {"N": 3}})

    assert request == StartRequest("production", "acme", "app", "1.0.3", "job-1", {"N": "3"})


@pytest.mark.parametrize("variables", [{"N": True}, {"N": [1]}, ["N"]])
def test_variables_that_are_not_names_to_text_are_refused(variables: object) -> None:
    with pytest.raises(Invalid, match="environmentVariables must be an object"):
        parse_start_request({**BODY, "environmentVariables": variables})


def test_a_missing_environment_is_refused_by_its_name() -> None:
    with pytest.raises(Invalid, match="environmentName"):
        parse_start_request({key: value for key, value in BODY.items() if key != "environmentName"})


def test_an_agent_is_handed_the_job_its_artifacts_variables_and_settings() -> None:
    job = AgentJob(4, "job-9", [{"name": "app", "url": "https://s3/app.zip"}], {"V": "1"}, {"folder": "/srv"})

    assert agent_job_json(job) == {
        "deploymentId": 4,
        "jobId": "job-9",
        "artifacts": [{"name": "app", "url": "https://s3/app.zip"}],
        "variables": {"V": "1"},
        "settings": {"folder": "/srv"},
    }


def test_a_deployment_shows_its_environment_as_it_was_when_it_started_and_no_build_once_that_is_gone() -> None:
    started = datetime(2026, 1, 2, tzinfo=UTC)
    environment = EnvironmentAtStart(3, "staging", "FTP", started)
    deployment = Deployment(1, 2, 9, 3, environment, 5, [], "success", started, started=started)

    shown = deployment_json(deployment, None, [])

    assert shown["environment"] == {
        "deploymentEnvironmentId": 3,
        "name": "staging",
        "provider": "FTP",
        "created": "2026-01-02T00:00:00.0000000+00:00",
    }
    assert (shown["build"], shown["status"], "finished" in shown) == (None, "success", False)
