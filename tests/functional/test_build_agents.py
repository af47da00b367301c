"""Build agents: a machine of the team's own runs the account's jobs of the images it is registered for.

The agent here is ``conveyor agent --builds`` on this machine, a process of its own calling the API over
loopback, as it would from the team's machine; it runs each job's runner in the sandbox, as the local executor
does. An image no executor serves fails at once; one only agents serve waits, queued and saying so.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.api import build_agents as agent_views
from chalicelib.domain.execution import dispatch, lost_jobs
from chalicelib.local.pump import SqsPump
from chalicelib.runner import sandbox
from chalicelib.store import build_agents as agent_store
from chalicelib.store import jobs as job_store
from chalicelib.store.models import JobModel
from tests import runners
from tests.builds import POLL_SECONDS, BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, Caller, assert_refused, unique, view_answer

AGENT_LEASE_SECONDS = 6  # short here, so a killed agent's job ends within the test's patience
needs_sandbox = pytest.mark.skipif(
    isinstance(sandbox.sandbox(), str), reason=f"no sandbox can be made on this machine: {sandbox.sandbox()}"
)


@pytest.fixture
def short_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_LEASE_SECONDS", str(AGENT_LEASE_SECONDS))


def register(account: Account, *images: str, pull_requests: bool = False) -> dict[str, Any]:
    body = {"name": unique("agent"), "images": list(images), "pullRequests": pull_requests}
    reply = account.api.post("/build-agents", body)
    assert reply.status == 200, reply.body
    return reply.json


def start_agent(api_url: str, key: str, *options: str) -> subprocess.Popen[bytes]:
    """``conveyor agent --builds`` as a team would start it, its key in its environment and nothing of this
    process's."""
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "CONVEYOR_AGENT_KEY": key}
    command = [sys.executable, "-m", "chalicelib.cli", "agent", "--builds", "--url", api_url, *options]
    return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture
def agent_project(account: Account, git_server: GitServer, pump: SqsPump) -> Iterator[tuple[BuildProject, str]]:
    image = unique("Team Box")
    script = ["build_script:", "  - echo built by an agent on $APPVEYOR_BUILD_WORKER_IMAGE", "  - sleep $PAUSE"]
    yield BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}", *script)}), image


def test_an_image_no_executor_serves_fails_at_once_naming_it_and_never_runs(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    yml = appveyor_yml("image: Visual Studio 2022", "build_script:", "  - echo ran on the wrong machine")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    queued = project.start()
    assert queued["status"] == "failed"  # the answer to the start itself: nothing was queued for a runner
    build = project.wait(queued["version"])
    job = build["jobs"][0]
    assert (build["status"], job["status"]) == ("failed", "failed")
    assert job["osType"] == "Windows"  # AppVeyor's value for its Windows images, wherever the job ran or not
    assert "executor" not in job
    messages = account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    assert "'Visual Studio 2022'" in messages[0]["message"] and "Available:" in messages[0]["message"]
    assert "ran on the wrong machine" not in project.log(job["jobId"])
    assert "started" not in job


def test_a_job_that_could_not_run_says_why_in_its_log_first_line_and_its_message(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    yml = appveyor_yml("image: macos-sonoma", "build_script:", "  - echo never")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    build = project.wait(project.start()["version"])
    job = build["jobs"][0]
    (reason,) = [message["message"] for message in account.api.get(f"/buildjobs/{job['jobId']}/messages").json]
    assert "'macos-sonoma'" in reason
    assert job["message"] == reason  # not null: the job itself says why, not only its messages
    assert project.log(job["jobId"]).splitlines()[0] == reason
    assert (
        account.api.get(f"/projects/{account.name}/{project.project['slug']}").json["build"]["jobs"][0]["message"]
        == reason
    )


def test_an_image_only_agents_serve_waits_queued_saying_so_while_none_is_connected(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    agent = register(account, "Visual Studio 2022")
    yml = appveyor_yml("image: visual studio 2022", "build_script:", "  - echo never here")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    version = project.start()["version"]
    time.sleep(3 * POLL_SECONDS + 1)  # long enough for the jobs queue to have dispatched it, were it dispatched
    job = project.build(version)["jobs"][0]
    assert (job["status"], job["executor"]) == ("queued", "agent")
    assert "'Visual Studio 2022'" in job["message"] and "none is connected" in job["message"]
    assert agent["name"] in job["message"]
    listed = {found["agentId"]: found for found in account.api.get("/build-agents").json}[agent["agentId"]]
    assert (listed["connected"], listed["lastContact"], listed["images"]) == (False, None, ["Visual Studio 2022"])
    assert "key" not in listed
    assert listed in view_answer(account, agent_views.list_build_agents, "/api/build-agents")  # GET's view


@needs_sandbox
def test_a_build_agent_runs_a_job_of_its_image_end_to_end_in_its_sandbox(
    account: Account, agent_project: tuple[BuildProject, str], api_url: str
) -> None:
    project, image = agent_project
    agent = register(account, image)
    version = project.start(environmentVariables={"PAUSE": "0"})["version"]
    process = start_agent(api_url, agent["key"], "--once")
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output.decode()
    build = project.wait(version)
    job = build["jobs"][0]
    assert (build["status"], job["executor"]) == ("success", "agent"), output.decode()
    assert f"built by an agent on {image}" in project.log(job["jobId"])
    listed = {found["agentId"]: found for found in account.api.get("/build-agents").json}[agent["agentId"]]
    assert listed["connected"] and listed["lastJobId"] == job["jobId"]
    assert agent["key"] not in project.log(job["jobId"])


@needs_sandbox
def test_a_build_agent_says_a_job_it_ran_failed_not_that_its_runner_exited_with_code_0(
    account: Account, git_server: GitServer, api_url: str
) -> None:
    image = unique("Team Box")
    yml = appveyor_yml(f"image: {image}", "build_script:", "  - exit 3")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    agent = register(account, image)
    version = project.start()["version"]
    process = start_agent(api_url, agent["key"], "--once")
    output, _ = process.communicate(timeout=120)
    job_id = project.wait(version)["jobs"][0]["jobId"]
    said = output.decode()
    assert f"job {job_id} ended: failed" in said, said
    assert "exited with code 0" not in said
    assert f"Job {job_id}: the runner ended it and reported its result" in said


@needs_sandbox
def test_a_killed_build_agent_takes_its_runner_with_it_and_the_job_ends_within_its_lease(
    account: Account, agent_project: tuple[BuildProject, str], api_url: str, short_leases: None
) -> None:
    project, image = agent_project
    agent = register(account, image)
    version = project.start(environmentVariables={"PAUSE": "300"})["version"]
    process = start_agent(api_url, agent["key"])
    try:
        job_id = project.wait(version, {"running"})["jobs"][0]["jobId"]
        project.wait_for_log(job_id, "built by an agent")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    killed = time.monotonic()
    while job_store.get_job(job_id).status == "running":  # type: ignore[union-attr]
        assert time.monotonic() - killed < AGENT_LEASE_SECONDS + 10, "the job's lease was still being renewed"
        lost_jobs.expire_leases()  # the sweeper, every minute
        time.sleep(0.5)
    assert project.wait(version)["status"] == "failed"


def test_build_agents_are_registered_by_admins_and_their_keys_work_only_for_the_agents_calls(account: Account) -> None:
    user = account.add_user(f"{unique('user')}@example.com")
    assert_refused(account.caller_for(user["email"]).post("/build-agents", {"name": "x", "images": ["y"]}), 403)
    assert_refused(account.api.post("/build-agents", {"name": "x", "images": []}), 400)
    assert_refused(account.api.post("/build-agents", {"name": "x", "images": [1]}), 400)
    assert "runner" in assert_refused(account.api.post("/build-agents", {"name": "x", "images": ["ubuntu"]}), 400)
    agent = register(account, "Some Image")
    stored = agent_store.get_agent_by_key_hash(hashlib.sha256(agent["key"].encode()).hexdigest())
    assert stored is not None and (stored.agent_id, stored.images) == (agent["agentId"], ["Some Image"])
    assert agent["key"] not in repr(agent_store.list_agents(stored.account_id))  # its hash is kept, not the key
    as_agent = Caller(account.client, agent["key"])
    assert_refused(as_agent.get("/projects"), 401)  # not an API key
    assert_refused(as_agent.get("/build-agents"), 401)
    assert as_agent.post("/agent/builds/next").status == 204
    assert account.api.delete(f"/build-agents/{agent['agentId']}").status == 204
    assert_refused(as_agent.post("/agent/builds/next"), 401)
    assert_refused(account.api.delete(f"/build-agents/{agent['agentId']}"), 404)
    assert agent_store.list_agents(stored.account_id) == []


def test_a_job_queued_before_executors_were_chosen_is_placed_when_dispatched(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    image = unique("Older Box")
    agent = register(account, image)
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}")})
    version = project.start()["version"]
    job_id = project.build(version)["jobs"][0]["jobId"]
    # as an earlier version stored it: no executor, waiting for the jobs queue
    old_form = [JobModel.executor.remove(), JobModel.run_on.remove(), JobModel.message.remove()]
    JobModel(job_id).update(actions=[*old_form, JobModel.waiting.set(job_store.WAITING)])
    assert "executor" not in project.build(version)["jobs"][0]
    dispatch.dispatch_job(job_id)  # its message, sent again by the sweeper
    job = project.build(version)["jobs"][0]
    assert (job["status"], job["executor"]) == ("queued", "agent") and image in job["message"]
    ticket = Caller(account.client, agent["key"]).post("/agent/builds/next")
    assert ticket.status == 200 and ticket.json["jobId"] == job_id
    assert account.api.delete(f"/builds/{account.name}/{project.project['slug']}/{version}").status == 204


def test_a_pull_request_build_goes_only_to_agents_registered_to_take_pull_requests(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    image = unique("Office Box")
    branches_only = register(account, image)
    files = {"appveyor.yml": appveyor_yml(f"image: {image}")}
    project = BuildProject(account, git_server, files)
    head = project.repository.commit({**files, "pr.txt": "from a fork"}, branch="feature")
    project.repository.set_ref("refs/pull/7/head", head)

    refused = project.wait(project.start(pullRequestId=7)["version"])
    message = account.api.get(f"/buildjobs/{refused['jobs'][0]['jobId']}/messages").json[0]["message"]
    assert refused["status"] == "failed" and f"'{image}'" in message and '"pullRequests": true' in message
    branch_build = project.start()
    assert branch_build["status"] == "queued"  # a branch build waits for the agent
    assert (
        account.api.delete(f"/builds/{account.name}/{project.project['slug']}/{branch_build['version']}").status == 204
    )

    takes_pull_requests = register(account, image, pull_requests=True)
    waiting = project.build(project.start(pullRequestId=7)["version"])["jobs"][0]
    assert (waiting["status"], waiting["executor"]) == ("queued", "agent")
    assert Caller(account.client, branches_only["key"]).post("/agent/builds/next").status == 204
    pull_request_agent = Caller(account.client, takes_pull_requests["key"])
    # without a sandbox, the job could read the agent's key: no pull request's job is handed to it
    assert pull_request_agent.post("/agent/builds/next", {"sandboxed": False}).status == 204
    # an agent that does not say whether it has a sandbox has none (an older or a hand-written one)
    assert pull_request_agent.post("/agent/builds/next", {}).status == 204
    assert pull_request_agent.post("/agent/builds/next").status == 204
    taken = pull_request_agent.post("/agent/builds/next", {"sandboxed": True})
    assert taken.status == 200 and taken.json["jobId"] == waiting["jobId"]


def test_an_image_name_too_long_to_be_one_is_refused_before_the_build_is_stored(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("image: " + "x" * 300)})
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}
    assert "255" in assert_refused(account.api.post("/builds", body), 400)
    assert account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []


def test_a_runner_that_ended_fails_only_its_own_attempt_not_a_rerun_that_claimed_the_job_since(
    account: Account, git_server: GitServer, pump: SqsPump, api_url: str
) -> None:
    """The local executor fails a job whose runner exited unfinished; a re-run may have claimed it meanwhile."""
    image = unique("Race Box")
    register(account, image)  # its job waits for an agent: no executor of the stack takes it
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}")})
    job_id = project.build(project.start()["version"])["jobs"][0]["jobId"]
    runners.dispatch(job_id, api_url)  # the attempt that holds the job now
    dispatch.fail_if_abandoned(job_id, "the token hash of an earlier attempt")
    assert job_store.get_job(job_id).status == "running"  # type: ignore[union-attr]
    held = job_store.get_job(job_id)
    dispatch.fail_if_abandoned(job_id, (held.token_hash if held else None) or "")
    assert job_store.get_job(job_id).status == "failed"  # type: ignore[union-attr]


def test_an_admin_registering_an_agent_for_an_image_the_service_runs_is_told_it_takes_those_jobs_and_secrets(
    account: Account,
) -> None:
    reply = account.api.post("/build-agents", {"name": unique("agent"), "images": ["ubuntu2204", "python:3.12"]})
    assert reply.status == 200, reply.body
    assert reply.json["takesOver"] == ["ubuntu2204", "python:3.12"]
    assert "ubuntu2204, python:3.12" in reply.json["warning"] and "secure variables" in reply.json["warning"]
    listed = {found["agentId"]: found for found in account.api.get("/build-agents").json}[reply.json["agentId"]]
    assert listed["takesOver"] == ["ubuntu2204", "python:3.12"]

    own = account.api.post("/build-agents", {"name": unique("agent"), "images": ["Team GPU box"]})
    assert (own.json["takesOver"], "warning" in own.json) == ([], False)  # nothing here runs it but the agent
    # (a Windows image's warning says it runs with no sandbox: test_windows_build_agents.py)


@needs_sandbox
def test_a_job_a_build_agent_took_from_the_services_runners_names_the_agent_in_the_job_and_its_log(
    account: Account, git_server: GitServer, pump: SqsPump, api_url: str
) -> None:
    agent = register(account, "Ubuntu2204")
    yml = appveyor_yml("image: Ubuntu2204", "build_script:", "  - echo built")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    version = project.start()["version"]
    process = start_agent(api_url, agent["key"], "--once")
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output.decode()

    job = project.wait(version)["jobs"][0]
    assert (job["status"], job["executor"], job["agentName"]) == ("success", "agent", agent["name"])
    log = project.log(job["jobId"])
    started, named = log.splitlines()[:2]  # the service's words on the job follow the log's first line
    assert started.startswith("Build started") and named == f"Running on build agent {agent['name']}.", log
