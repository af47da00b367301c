"""The CodeBuild executor: a job in a container image starts a CodeBuild build (moto's) with that image and the
job's ticket only; its buildspec, run here as CodeBuild would run it, fetches the runner and runs the job; a
cancel stops the build; a build lost before its runner reports ends its job when the lease runs out.

StartBuild's and StopBuild's parameters are read as the service sends them (a botocore event on its own client):
moto keeps the build but ignores the overrides.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.stub import Stubber

from chalicelib import aws
from chalicelib.domain.execution import lost_jobs
from chalicelib.executors import codebuild
from chalicelib.local.pump import SqsPump
from chalicelib.store import jobs as job_store
from tests.builds import POLL_SECONDS, WAIT_SECONDS, BuildProject, appveyor_yml
from tests.gitserver import GitServer, Repository
from tests.support import Account, Caller, unique

IMAGE = "python:3.12-slim"
USER, TOKEN = "deploy-bot", "clone-token-of-the-project"
COMPUTE_TYPE = codebuild.COMPUTE_TYPE


class Calls:
    """The StartBuild and StopBuild calls the service makes, with their parameters."""

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.stopped: list[str] = []

    def record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name == "StartBuild":
            self.started.append(copy.deepcopy(params))
        elif model.name == "StopBuild":
            self.stopped.append(params["id"])

    def start_of(self, job_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            for params in self.started:
                if json.loads(params["environmentVariablesOverride"][0]["value"])["jobId"] == job_id:
                    return params
            assert time.monotonic() < deadline, f"no CodeBuild build was started for job {job_id}"
            time.sleep(POLL_SECONDS)


@pytest.fixture(scope="module")
def project_name(fresh_resources: None) -> Iterator[str]:
    """A CodeBuild project as the packaged template makes it, set for the service (CONVEYOR_CODEBUILD_PROJECT)."""
    name = unique("builds")
    aws.client("codebuild").create_project(
        name=name,
        source={"type": "NO_SOURCE", "location": "none", "buildspec": codebuild.BUILDSPEC},  # moto wants a location
        artifacts={"type": "NO_ARTIFACTS"},
        environment={
            "type": "LINUX_CONTAINER",
            "image": "aws/codebuild/standard:7.0",
            "computeType": codebuild.COMPUTE_TYPE,
        },
        serviceRole="arn:aws:iam::123456789012:role/builds",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONVEYOR_CODEBUILD_PROJECT", name)
        yield name


@pytest.fixture
def calls(project_name: str) -> Iterator[Calls]:
    recorded = Calls()
    events = aws.client("codebuild").meta.events
    events.register("provide-client-params.codebuild.*", recorded.record, unique_id="test-codebuild-calls")
    yield recorded
    events.unregister("provide-client-params.codebuild.*", unique_id="test-codebuild-calls")


@pytest.fixture
def project(account: Account, git_server: GitServer, pump: SqsPump, project_name: str) -> BuildProject:
    script = ["build_script:", "  - echo in the container, ticket=${CONVEYOR_TICKET:-none}"]
    return BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {IMAGE}", *script)})


def run_buildspec(params: dict[str, Any], folder: Path) -> subprocess.CompletedProcess[str]:
    """The build's commands, as CodeBuild runs them: a shell with the override variables and what the image has
    (here: this Python, with the runner's libraries, first on the PATH)."""
    commands = yaml.safe_load(params["buildspecOverride"])["phases"]["build"]["commands"]
    variables = {variable["name"]: variable["value"] for variable in params["environmentVariablesOverride"]}
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    environment = {"PATH": path, "HOME": str(folder), **variables}
    script = "\n".join(commands)
    return subprocess.run(
        ["sh", "-c", script], cwd=folder, env=environment, capture_output=True, text=True, timeout=300
    )


def test_a_container_image_job_starts_on_codebuild_with_that_image_and_its_ticket_only(
    project: BuildProject, calls: Calls, project_name: str
) -> None:
    version = project.start()["version"]
    job = project.wait(version, {"running"})["jobs"][0]
    params = calls.start_of(job["jobId"])
    assert (params["projectName"], params["imageOverride"], job["executor"]) == (project_name, IMAGE, "codebuild")
    assert params["buildspecOverride"] == codebuild.BUILDSPEC and params["sourceTypeOverride"] == "NO_SOURCE"
    assert params["privilegedModeOverride"] is False
    assert params["timeoutInMinutesOverride"] == 60 + codebuild.FINISH_MINUTES  # AppVeyor's 60 minutes, not Lambda's 15
    [variable] = params["environmentVariablesOverride"]
    ticket = json.loads(variable["value"])
    assert (variable["name"], variable["type"]) == (codebuild.TICKET_VARIABLE, "PLAINTEXT")
    assert set(ticket) == {"apiUrl", "jobId", "token", "warnings"} and ticket["token"].startswith("cvyj_")
    sent = json.dumps(params)
    for name in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID"):
        assert not os.environ.get(name) or os.environ[name] not in sent, f"{name} was handed to the build"
    build_id = wait_for_build_id(job["jobId"])  # noted once StartBuild has answered
    assert build_id in aws.client("codebuild").list_builds_for_project(projectName=project_name)["ids"]
    assert project.account.api.delete(build_path(project, version)).status == 204  # no build is left running


def test_the_buildspec_fetches_the_runner_with_the_ticket_and_runs_the_job_as_codebuild_would(
    project: BuildProject, calls: Calls, tmp_path: Path
) -> None:
    version = project.start()["version"]
    job_id = project.wait(version, {"running"})["jobs"][0]["jobId"]
    ran = run_buildspec(calls.start_of(job_id), tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    build = project.wait(version)
    assert build["status"] == "success", ran.stdout + ran.stderr
    assert "in the container, ticket=none" in project.log(job_id)  # the scripts never see the ticket


def test_cancelling_a_codebuild_job_stops_its_build(project: BuildProject, calls: Calls) -> None:
    queued = project.start()
    job_id = project.wait(queued["version"], {"running"})["jobs"][0]["jobId"]
    calls.start_of(job_id)
    build_id = wait_for_build_id(job_id)
    assert project.account.api.delete(build_path(project, queued["version"])).status == 204
    assert calls.stopped == [build_id]  # (moto's build then still says SUCCEEDED: it models no stop)
    assert project.wait(queued["version"])["status"] == "cancelled"


def test_a_codebuild_build_still_starting_keeps_its_job_and_one_that_ended_unheard_fails_it(
    project: BuildProject, calls: Calls
) -> None:
    version = project.start()["version"]
    job_id = project.wait(version, {"running"})["jobs"][0]["jobId"]
    build_id = wait_for_build_id(job_id)
    job = job_store.get_job(job_id)
    assert job is not None and job.lease_expires is not None
    after_lease = job.lease_expires + 1
    with StubbedState(build_id, "IN_PROGRESS", "PROVISIONING"):
        assert not lost_jobs.end_expired(job, after_lease)
    renewed = job_store.get_job(job_id)
    assert renewed is not None and renewed.status == "running" and (renewed.lease_expires or 0) > job.lease_expires
    with StubbedState(build_id, "ThrottlingException"):  # asked again later, and the sweep goes on meanwhile
        assert not lost_jobs.end_expired(renewed, (renewed.lease_expires or 0) + 1)
    renewed_again = job_store.get_job(job_id)
    assert renewed_again is not None and renewed_again.status == "running"
    assert (renewed_again.lease_expires or 0) > (renewed.lease_expires or 0)
    renewed = renewed_again
    with StubbedState(build_id, "FAILED", "PROVISIONING"):
        assert lost_jobs.end_expired(renewed, (renewed.lease_expires or 0) + 1)
    failed = job_store.get_job(job_id)
    assert failed is not None and failed.status == "failed"
    assert build_id in (failed.message or "") and "FAILED" in (failed.message or "")
    assert project.wait(version)["status"] == "failed"


@pytest.fixture(scope="module")
def private_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with GitServer(tmp_path_factory.mktemp("private"), credentials=(USER, TOKEN)) as server:
        yield server


def test_a_pull_request_build_in_an_image_of_its_own_gets_no_clone_credentials(
    account: Account, private_server: GitServer, pump: SqsPump, calls: Calls
) -> None:
    """The image runs the runner (its python3): a pull request's author, who chose it, would get the project's
    clone credentials. A branch build, whose appveyor.yml only those who may push wrote, gets them."""
    name = unique("private") + ".git"
    repository = Repository.create(private_server.root, name)
    files = {"appveyor.yml": appveyor_yml(f"image: {IMAGE}")}
    repository.commit(files)
    repository.set_ref("refs/pull/9/head", repository.commit({**files, "pr.txt": "from a fork"}, branch="feature"))
    credentials = {"repositoryAuthentication": "credentials", "repositoryUsername": USER, "repositoryPassword": TOKEN}
    body = {"repositoryProvider": "git", "repositoryName": private_server.url_of(name), **credentials}
    project = account.api.post("/projects", body).json

    def clone_credentials(**start: Any) -> Any:
        queued = account.api.post("/builds", {"accountName": account.name, "projectSlug": project["slug"], **start})
        shown = account.api.get(f"/projects/{account.name}/{project['slug']}/build/{queued.json['version']}")
        job_id = shown.json["build"]["jobs"][0]["jobId"]
        ticket = json.loads(calls.start_of(job_id)["environmentVariablesOverride"][0]["value"])
        answer = Caller(account.client, ticket["token"]).post(f"/runner/jobs/{job_id}/clone-credentials")
        assert account.api.delete(f"/builds/{account.name}/{project['slug']}/{queued.json['version']}").status == 204
        return answer

    refused = clone_credentials(pullRequestId=9)
    assert refused.status == 409 and "pull request" in refused.json["message"] and TOKEN not in refused.body.decode()
    assert clone_credentials(branch="master").json == {"username": USER, "password": TOKEN}


def build_path(project: BuildProject, version: str) -> str:
    return f"/builds/{project.project['accountName']}/{project.project['slug']}/{version}"


def wait_for_build_id(job_id: str) -> str:
    deadline = time.monotonic() + WAIT_SECONDS
    while (job := job_store.get_job(job_id)) is None or job.external_id is None:
        assert time.monotonic() < deadline, f"job {job_id} has no CodeBuild build id"
        time.sleep(POLL_SECONDS)
    return job.external_id


class StubbedState:
    """CodeBuild's answer to BatchGetBuilds for one build, from a stubbed client the service uses meanwhile."""

    def __init__(self, build_id: str, status: str, phase: str = "") -> None:
        self.client = aws.botocore_session().create_client("codebuild", region_name="us-east-1")
        self.stubber = Stubber(self.client)
        if status == "ThrottlingException":  # CodeBuild does not answer
            self.stubber.add_client_error("batch_get_builds", status, expected_params={"ids": [build_id]})
            return
        answer = {"builds": [{"id": build_id, "buildStatus": status, "currentPhase": phase}]}
        self.stubber.add_response("batch_get_builds", answer, {"ids": [build_id]})

    def __enter__(self) -> None:
        self.real = aws.client("codebuild")
        self.stubber.activate()
        aws.inject("codebuild", self.client)

    def __exit__(self, *_: Any) -> None:
        aws.inject("codebuild", self.real)
        self.stubber.deactivate()
        self.stubber.assert_no_pending_responses()  # the service asked CodeBuild


# The same image on AWS (docs/executors.md, "The same images on AWS"): where a stage has Conveyor's image in its
# repository, no image and every Ubuntu name start CodeBuild in it, stack: and services: honoured there; without one,
# Ubuntu2204 runs in CodeBuild's curated image, which is not Conveyor's, so they are refused when queued.
OWN_REPOSITORY = "123456789012.dkr.ecr.us-east-1.amazonaws.com/conveyor-test-images"
STACK_AND_SERVICES = ["stack: node 18, postgresql", "build_script:", "  - node --version"]


@pytest.mark.parametrize(
    ("image", "tag"),
    [(None, "ubuntu"), ("Ubuntu", "ubuntu"), ("Ubuntu1804", "ubuntu1804"), ("ubuntu2204", "ubuntu2204"),
     ("Ubuntu2404", "ubuntu2404")],
)  # fmt: skip
def test_with_an_image_repository_no_image_and_every_ubuntu_name_start_codebuild_in_conveyors_image(
    image: str | None,
    tag: str,
    account: Account,
    git_server: GitServer,
    pump: SqsPump,
    calls: Calls,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONVEYOR_IMAGE_REPOSITORY", OWN_REPOSITORY)
    named = [f"image: {image}"] if image else []
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*named, *STACK_AND_SERVICES)})

    version = project.start()["version"]
    job = project.wait(version, {"running"})["jobs"][0]
    params = calls.start_of(job["jobId"])

    assert (params["imageOverride"], job["executor"]) == (f"{OWN_REPOSITORY}:{tag}", "codebuild")  # stack: not refused
    assert params["timeoutInMinutesOverride"] == 60 + codebuild.FINISH_MINUTES  # not the runner function's 15
    assert params["privilegedModeOverride"] is False
    assert project.account.api.delete(build_path(project, version)).status == 204


def test_without_an_image_repository_a_curated_image_refuses_stack_and_services_saying_where_it_runs(
    account: Account, git_server: GitServer, pump: SqsPump, calls: Calls
) -> None:
    yml = appveyor_yml("image: Ubuntu2204", *STACK_AND_SERVICES)
    project = BuildProject(account, git_server, {"appveyor.yml": yml})

    build = project.run()
    (job,) = build["jobs"]

    assert build["status"] == "failed"
    assert "appveyor.yml stack: is not honoured" in job["message"], job
    assert "aws/codebuild/standard:7.0" in job["message"], job
    assert calls.started == []  # nothing was started for it
