"""Requests the fuzz run (tests/e2e/test_fuzz.py) found answered wrongly, each kept here once fixed."""

from __future__ import annotations

import pytest

from tests.deployments import add_environment
from tests.support import Account, add_project


def test_starting_a_build_of_an_empty_project_slug_is_not_found(account: Account) -> None:
    reply = account.api.post("/builds", {"accountName": account.name, "projectSlug": ""})

    assert reply.status == 404, reply.body
    assert reply.json["message"] == "Project not found or access denied."


def test_deploying_an_empty_build_version_is_not_found(account: Account) -> None:
    project = add_project(account)
    environment = add_environment(account, "Webhook", {"url": "http://127.0.0.1:9/hook"})
    reply = account.api.post(
        "/deployments",
        {
            "environmentName": environment["name"],
            "accountName": account.name,
            "projectSlug": project["slug"],
            "buildVersion": "",
        },
    )

    assert reply.status == 404, reply.body
    assert "Build version '' not found" in reply.json["message"]


@pytest.mark.parametrize("setting", ["agents_timeout", "agents_expected"])
def test_an_agent_setting_that_is_not_a_whole_number_refuses_the_deployment_and_stores_none(
    account: Account, setting: str
) -> None:
    project = add_project(account)
    environment = add_environment(account, "Agent", {setting: "²"})
    body = {"environmentName": environment["name"], "accountName": account.name, "projectSlug": project["slug"]}

    reply = account.api.post("/deployments", {**body, "buildVersion": "1.0.1"})

    assert reply.status == 400, reply.body
    assert f"{setting} setting must be a whole number" in reply.json["message"]
    listed = account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments")
    assert listed.json["deployments"] == []


@pytest.mark.parametrize("path", ["/buildjobs//log", "/buildjobs//artifacts", "/buildjobs//artifacts/a.txt"])
def test_an_empty_job_id_is_not_found(account: Account, path: str) -> None:
    reply = account.api.get(path)

    assert reply.status == 404, reply.body
    assert reply.json["message"]
