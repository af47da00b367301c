"""Deployments end to end: a real build's artifacts delivered through the deployments queue, read back, stopped."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from chalice.app import SQSEvent

from chalicelib import aws
from chalicelib.agent import Agent
from chalicelib.api import agents as agent_views
from chalicelib.api import deployments as deployment_views
from chalicelib.core.messages import AgentDeadline, RunDeploymentJob, body_of
from chalicelib.domain.deployments.deployment_jobs import agent_deadline, run_deployment_job
from chalicelib.domain.shared.warm_cache import forget_everything
from chalicelib.local.pump import SqsPump, sqs_event
from chalicelib.store import blobs, logs
from chalicelib.store import deployments as deployment_store
from chalicelib.store import jobs as job_store
from chalicelib.workers.deployments import run_deployments
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment, deploy, wait_for_deployment
from tests.gitserver import GitServer
from tests.support import Account, Caller, member_of_role, request_of, view_answer


def run_agent(api_url: str, environment: dict[str, Any], folder: Path, name: str = "web-01") -> threading.Thread:
    """``conveyor agent --once`` in a thread: it takes one job if one waits."""
    agent = Agent(api_url, environment["environmentAccessKey"], folder, name=name, say=lambda _: None)
    thread = threading.Thread(target=agent.run, kwargs={"once": True}, daemon=True)
    thread.start()
    return thread


def test_start_answers_the_queued_deployment_at_top_level(built: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "5"})

    reply = deploy(project, environment, build["version"])

    assert reply.status == 200, reply.body
    deployment = reply.json
    assert deployment["status"] == "queued"
    assert deployment["build"]["version"] == build["version"]
    assert deployment["build"]["jobs"] == []
    assert deployment["environment"]["name"] == environment["name"]
    assert deployment["environment"]["provider"] == "Agent"
    assert [job["status"] for job in deployment["jobs"]] == ["queued"]
    assert "started" not in deployment and "finished" not in deployment
    shown = view_answer(
        project.account, deployment_views.get_deployment, "/", deploymentId=str(deployment["deploymentId"])
    )
    assert shown == project.account.api.get(f"/deployments/{deployment['deploymentId']}").json  # its route's view


def test_agent_downloads_the_artifacts_and_runs_the_deploy_script(
    built: tuple[BuildProject, dict[str, Any]], api_url: str, tmp_path: Path
) -> None:
    project, build = built
    environment = add_environment(
        project.account,
        "Agent",
        {"deploy_script": "cat out/app.txt > deployed.txt && echo deployed to $(APPVEYOR_PROJECT_SLUG) $TARGET"},
        TARGET="live",
    )
    deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]

    run_agent(api_url, environment, tmp_path).join(timeout=30)
    deployment = wait_for_deployment(project.account, deployment_id)

    assert deployment["status"] == "success", deployment
    assert (tmp_path / "site" / "index.html").read_text() == "<h1>hi</h1>\n"
    assert (tmp_path / "deployed.txt").read_text() == f"app-{build['version']}\n"
    (job,) = deployment["jobs"]
    assert job["name"] == "web-01"
    log = project.log(job["jobId"])
    assert f"deployed to {project.project['slug']} live" in log  # $(NAME) in a setting, and a variable


def test_deployment_nobody_takes_fails_after_the_agents_timeout(built: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "5"})
    deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]

    deployment = wait_for_deployment(project.account, deployment_id, seconds=30)

    assert deployment["status"] == "failed"
    assert deployment["jobs"][0]["status"] == "failed"


def test_stopping_a_running_deployment_kills_its_script_and_ends_it_cancelled(
    built: tuple[BuildProject, dict[str, Any]], api_url: str, tmp_path: Path
) -> None:
    project, build = built
    marker = tmp_path / "finished"
    environment = add_environment(project.account, "Agent", {"deploy_script": f"sleep 30; touch {marker}"})
    deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]
    agent = run_agent(api_url, environment, tmp_path / "site")
    wait_for_deployment(project.account, deployment_id, {"running"})

    reply = project.account.api.put("/deployments/stop", {"deploymentId": deployment_id})

    assert reply.status == 204
    deployment = wait_for_deployment(project.account, deployment_id, seconds=20)
    assert deployment["status"] == "cancelled"
    agent.join(timeout=10)
    assert not agent.is_alive()
    assert not marker.exists()


def test_stopping_a_queued_deployment_cancels_it_at_once_and_a_finished_one_stays(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60"})
    deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]

    assert project.account.api.put("/deployments/stop", {"deploymentId": deployment_id}).status == 204
    stopped = project.account.api.get(f"/deployments/{deployment_id}").json["deployment"]
    assert stopped["status"] == "cancelled"

    assert project.account.api.put("/deployments/stop", {"deploymentId": deployment_id}).status == 204
    (job,) = stopped["jobs"]
    agent_deadline(job["jobId"])  # the agents' time running out after the stop fails no cancelled job
    run_deployment_job(job["jobId"])  # nor does a message to run it, delivered late
    late = [body_of(RunDeploymentJob(job["jobId"])), body_of(AgentDeadline(job["jobId"])), "not a message"]
    arn = "arn:aws:sqs:us-east-1:123456789012:deployments"
    records = [
        {"MessageId": f"m{n}", "ReceiptHandle": f"r{n}", "Body": json.dumps(body)} for n, body in enumerate(late)
    ]
    run_deployments(SQSEvent(sqs_event(arn, records), None))  # the queue's handler: the same, and skips the junk
    after = project.account.api.get(f"/deployments/{deployment_id}").json["deployment"]
    assert (after["status"], after["jobs"][0]["status"]) == ("cancelled", "cancelled")


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"environmentName": "no-such-environment"}, 404),
        ({"projectSlug": "no-such-project"}, 404),
        ({"buildVersion": "9.9.9"}, 404),
        ({"buildJobId": "nosuchjob"}, 404),
        ({"environmentVariables": ["A=1"]}, 400),
        ({"buildVersion": None}, 400),
    ],
)
def test_start_with_unknown_names_or_bad_fields_is_refused(
    built: tuple[BuildProject, dict[str, Any]], change: dict[str, Any], status: int
) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {})
    body = {
        "environmentName": environment["name"],
        "accountName": project.project["accountName"],
        "projectSlug": project.project["slug"],
        "buildVersion": build["version"],
        **change,
    }

    reply = project.account.api.post("/deployments", {k: v for k, v in body.items() if v is not None})

    assert reply.status == status, reply.body
    assert reply.json["message"]
    assert project.account.api.get(f"{project.path}/deployments").json["deployments"] == []


def test_a_build_that_did_not_succeed_cannot_be_deployed(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - exit 1")})
    build = project.run()
    environment = add_environment(account, "Agent", {})

    reply = deploy(project, environment, build["version"])

    assert reply.status == 409
    assert "failed" in reply.json["message"]


def test_role_without_deploy_permission_cannot_start_or_stop(built: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60"})
    deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]
    project.account.add_role("Readers", allowed=set())
    reader = member_of_role(project.account, "Readers")

    assert reader.post("/deployments", {"environmentName": environment["name"]}).status == 403
    assert reader.put("/deployments/stop", {"deploymentId": deployment_id}).status == 403
    assert reader.get(f"/deployments/{deployment_id}").status == 200


def test_another_accounts_deployment_is_not_found(
    built: tuple[BuildProject, dict[str, Any]], other_account: Account
) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60"})
    deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]

    assert other_account.api.get(f"/deployments/{deployment_id}").status == 404
    assert other_account.api.put("/deployments/stop", {"deploymentId": deployment_id}).status == 404
    assert other_account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments").status == 404


def test_project_deployments_page_newest_first_with_exclusive_start(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60"})
    ids = [deploy(project, environment, build["version"]).json["deploymentId"] for _ in range(4)]

    first = project.account.api.get(f"{project.path}/deployments?recordsNumber=3").json
    assert [entry["deployment"]["deploymentId"] for entry in first["deployments"]] == ids[::-1][:3]
    assert all(entry["environment"]["name"] == environment["name"] for entry in first["deployments"])
    assert first["project"]["slug"] == project.project["slug"]
    rest = project.account.api.get(f"{project.path}/deployments?startDeploymentId={ids[1]}").json
    assert [entry["deployment"]["deploymentId"] for entry in rest["deployments"]] == [ids[0]]
    assert project.account.api.get(f"{project.path}/deployments?recordsNumber=21").status == 400
    assert project.account.api.get(f"{project.path}/deployments?recordsNumber=0").status == 400

    by_environment = project.account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments")
    assert by_environment.status == 200
    listed = by_environment.json
    assert listed["environment"]["name"] == environment["name"]
    assert [entry["deployment"]["deploymentId"] for entry in listed["deployments"]] == ids[::-1]
    assert {entry["project"]["slug"] for entry in listed["deployments"]} == {project.project["slug"]}


def test_agent_with_a_wrong_key_is_refused(api_url: str, tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        f"{api_url}/api/agent/jobs/next", data=b"{}", headers={"Authorization": "Bearer wrong-key"}, method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as refusal:
        urllib.request.urlopen(request, timeout=10)
    assert refusal.value.code == 401
    for authorization in ("Bearer wrong-key", "wrong-key", ""):  # the route's view, as it is called
        answered = agent_views.next_job(request_of("POST", "/", {"Authorization": authorization}, b"{}"))
        assert (answered.status_code, answered.body) == (401, {"message": "Authorization required"})


def test_agent_log_report_over_the_line_limit_is_refused(account: Account, api_url: str) -> None:
    import json
    import urllib.error
    import urllib.request

    environment = add_environment(account, "Agent", {})
    request = urllib.request.Request(
        f"{api_url}/api/agent/jobs/any-job/log",
        data=json.dumps({"lines": ["line"] * 1001}).encode(),
        headers={"Authorization": f"Bearer {environment['environmentAccessKey']}"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refusal:
        urllib.request.urlopen(request, timeout=10)
    assert refusal.value.code == 400
    assert "at most 1000" in json.loads(refusal.value.read())["message"]


def test_deleting_the_project_removes_its_deployments_and_their_jobs(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60"})
    deployment = deploy(project, environment, build["version"]).json
    project_id = deployment["build"]["projectId"]

    assert project.account.api.delete(project.path).status == 204

    assert project.account.api.get(f"/deployments/{deployment['deploymentId']}").status == 404
    assert deployment_store.list_project_deployments(project_id, None, 20) == []
    assert job_store.get_job(deployment["jobs"][0]["jobId"]) is None
    listed = project.account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments").json
    assert listed["deployments"] == []


def agent_deployment(
    built: tuple[BuildProject, dict[str, Any]], settings: dict[str, str] | None = None, secure: set[str] = frozenset()
) -> tuple[dict[str, Any], Caller]:
    """A queued deployment of the built project to a new Agent environment, and an agent of that environment."""
    project, build = built
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60", **(settings or {})}, secure)
    deployment = deploy(project, environment, build["version"]).json
    return deployment, Caller(project.account.client, environment["environmentAccessKey"])


def test_an_agent_result_for_a_job_it_never_took_is_a_409_and_the_job_stays_queued(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    deployment, agent = agent_deployment(built)
    job_id = deployment["jobs"][0]["jobId"]

    reply = agent.post(f"/agent/jobs/{job_id}/result", {"success": True})

    assert reply.status == 409, reply.body
    assert "jobs/next" in reply.json["message"]
    assert job_store.get_job(job_id).status == "queued"  # type: ignore[union-attr]


def test_an_agent_result_while_a_log_report_is_in_flight_is_a_409_and_a_retry_finishes(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, _ = built
    deployment, agent = agent_deployment(built)
    job_id = agent.post("/agent/jobs/next", {"name": "web-01"}).json["jobId"]
    in_flight = job_store.next_log_chunk(job_id)  # a report has its chunk number, its lines are not stored yet

    early = agent.post(f"/agent/jobs/{job_id}/result", {"success": True})
    job = job_store.get_job(job_id)
    assert job is not None
    logs.put_chunk(blobs.job_prefix(job.account_id, job.project_id, job.build_id, job_id), in_flight, b"deployed\n")
    retried = agent.post(f"/agent/jobs/{job_id}/result", {"success": True})

    assert early.status == 409, early.body
    assert "send the result again" in early.json["message"]
    assert retried.status == 204, retried.body
    assert wait_for_deployment(project.account, deployment["deploymentId"])["status"] == "success"
    assert project.account.api.get(f"/buildjobs/{job_id}/log").body == b"deployed\n"


def test_an_agents_log_reports_mask_its_secrets_without_asking_kms_each_time(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, _ = built
    _, agent = agent_deployment(built, {"token": "s3cr3t-one", "key": "s3cr3t-two"}, {"token", "key"})
    job_id = agent.post("/agent/jobs/next", {"name": "web-01"}).json["jobId"]
    decrypted: list[str] = []

    def count(**_: Any) -> None:
        decrypted.append("Decrypt")

    kms = aws.client("kms")
    kms.meta.events.register("before-call.kms.Decrypt", count)
    try:
        forget_everything()
        for line in ("using s3cr3t-one", "and s3cr3t-two", "done"):
            assert agent.post(f"/agent/jobs/{job_id}/log", {"lines": [line]}).status == 204
    finally:
        kms.meta.events.unregister("before-call.kms.Decrypt", count)
    assert agent.post(f"/agent/jobs/{job_id}/result", {"success": True}).status == 204

    assert len(decrypted) == 2  # once per secret, not once per secret per report
    log = project.account.api.get(f"/buildjobs/{job_id}/log").body.decode()
    assert log == "using [secure]\nand [secure]\ndone\n"
