"""A second review of issue 34, finding 3, as an attacker: a build started with variables by a member who may run
builds but not change the project's settings is meant to be treated as a pull request's build (no secure variable,
no cache saved). Two of a pull request's protections are not applied to it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from chalicelib.domain.job_identity.job_tokens import keys_of, mint_token
from chalicelib.store import job_moves
from chalicelib.store import jobs as job_store
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import ARTIFACTS_YML
from tests.functional.test_id_tokens import line, verified
from tests.functional.test_inline_deployments import build_messages, ftp_entry, project_with_token
from tests.gitserver import GitServer
from tests.peers import FtpServer
from tests.support import Account, Caller, member_of_role, project_path, unique

ENTRY_ID = "0123456789abcdef"


@pytest.fixture
def builder(account: Account) -> Caller:
    """A member whose role may run builds, and nothing else."""
    role = account.add_role(unique("builders"), {"RunProjectBuild"})
    return member_of_role(account, role["name"])


def start(project: BuildProject, caller: Caller, variables: dict[str, str], **fields: str) -> Any:
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"], **fields}
    return caller.post("/builds", {**body, "environmentVariables": variables})


def claimed(account: Account, project: BuildProject, version: str) -> tuple[str, Caller]:
    """The build's job, claimed here as dispatch claims it, and its runner: what the build's scripts call."""
    (job_id,) = [job["jobId"] for job in project.build(version)["jobs"]]
    queued = job_store.get_job(job_id)
    assert queued is not None
    token = mint_token(keys_of(queued))
    assert job_moves.claim_job(job_id, int(time.time()) + 120, token.token_hash)
    return job_id, Caller(account.client, token.token, prefix="/api/runner/jobs")


def test_a_build_started_with_variables_by_a_builder_cannot_save_the_cache_through_the_job_protocol(
    account: Account, git_server: GitServer, builder: Caller
) -> None:
    # no pump: the job stays queued until it is claimed here, as dispatch claims it; its token is the build's
    # (docs/isolation.md: "count it as the build's"): the scripts of a build the builder's variables shape call
    # the job protocol as the runner does, and write the cache the project's next (trusted) builds restore
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    started = start(project, builder, {"FLAVOR": "debug"})
    assert started.status == 200, started.body
    job_id, runner = claimed(account, project, started.json["version"])

    entries = runner.post(f"/{job_id}/cache/entries", {"ids": [ENTRY_ID]})
    upload = runner.post(f"/{job_id}/cache/uploads", {"id": ENTRY_ID, "size": 7, "metadata": {}})
    prune = runner.post(f"/{job_id}/cache/prune", {"keep": []})

    assert upload.status == 403, upload.body  # a pull request's build is refused the upload URL
    assert prune.status == 403, prune.body
    assert entries.status == 200, entries.body
    assert entries.json["save"] is False  # as a pull request's build


def test_a_build_started_with_variables_by_a_builder_runs_no_inline_deployment_with_the_projects_secrets(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path, builder: Caller
) -> None:
    # the builder may not read or change the project's settings; its variables shape the build (finding 3's premise:
    # TAR_OPTIONS and the like run code of theirs), whose artifacts then go out with the project's FTP password
    with FtpServer(tmp_path) as ftp:
        project, token = project_with_token(account, git_server, ftp)
        yml = ARTIFACTS_YML + appveyor_yml("deploy:", *ftp_entry(ftp, token, "    folder: /release"))
        project.repository.commit({"appveyor.yml": yml}, branch="main")
        started = start(project, builder, {"FLAVOR": "debug"}, branch="main")
        assert started.status == 200, started.body
        build = project.wait(started.json["version"])
        assert build["status"] == "success", build
        messages = build_messages(project, build, 1)
        time.sleep(2)  # a deployment that was started has delivered by now
        delivered = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file())

    listed = account.api.get(project_path(project.project) + "/deployments").json["deployments"]
    assert delivered == [], messages
    assert listed == [], messages
    assert not any(message.startswith("Inline deployment 1 (FTP) started") for message in messages), messages


def test_a_build_started_with_variables_by_a_builder_cannot_take_a_release_version(
    account: Account, git_server: GitServer, pump: Any, builder: Caller
) -> None:
    # as a pull request's: UpdateBuild -Version from a build the builder's variables shape would name a release
    yml = appveyor_yml("build_script:", "  - appveyor UpdateBuild -Version 2.0.0")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    started = start(project, builder, {"FLAVOR": "debug"})
    assert started.status == 200, started.body

    build = project.wait(started.json["version"])

    assert build["version"] == started.json["version"]
    assert account.api.get(f"{project.path}/build/2.0.0").status == 404
    log = project.log(build["jobs"][0]["jobId"])
    assert "started with environment variables by someone who may not change the project's settings" in log


def test_a_build_started_with_variables_by_a_builder_goes_to_no_build_agent_that_takes_no_pull_requests(
    account: Account, git_server: GitServer, builder: Caller
) -> None:
    # a team's own machine registered for its branches' builds (not for code anyone may send) runs no build
    # whose variables someone who may not change the project chose
    image = unique("Office Box")
    branches_only = account.api.post("/build-agents", {"name": unique("agent"), "images": [image]})
    assert branches_only.status == 200, branches_only.body
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}")})

    started = start(project, builder, {"FLAVOR": "debug"})

    assert started.status == 200, started.body
    build = project.build(started.json["version"])
    assert build["status"] == "failed", build
    message = account.api.get(f"/buildjobs/{build['jobs'][0]['jobId']}/messages").json[0]["message"]
    assert "nor builds started with variables" in message
    assert Caller(account.client, branches_only.json["key"]).post("/agent/builds/next").status == 204


def test_a_build_started_with_variables_by_a_builder_gets_no_id_token_a_branchs_trust_policy_takes(
    account: Account, git_server: GitServer, pump: Any, builder: Caller, api_url: str
) -> None:
    # the project lets builds whose secrets are withheld have ID tokens (its roles tell pull requests apart by
    # their sub); a build a builder's variables shape must not get the sub a role trusting its branch takes
    yml = appveyor_yml(
        "id_token: true",
        "build_script:",
        '  - \'echo "CURL=$(curl -sf "$ACTIONS_ID_TOKEN_REQUEST_URL" '
        '-H "Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN")"\'',
    )
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    allowed = account.api.get(project.path + "/settings").json["settings"]
    allowed["configuration"]["idTokenPullRequests"] = True
    assert account.api.put("/projects", allowed).status == 204
    started = start(project, builder, {"FLAVOR": "debug"})
    assert started.status == 200, started.body

    build = project.wait(started.json["version"])

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    issuer = f"{api_url}/oidc/{project.project['accountName'].lower()}"
    claims = verified(json.loads(line(log, "CURL"))["value"], issuer, issuer)
    assert claims["sub"] == f"project:{project.project['accountName']}/{project.project['slug']}:pull_request"
    assert claims["ref"] == f"refs/heads/{build['branch']}" and claims["ref_type"] == "branch"
