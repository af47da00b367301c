"""A start request's environmentVariables, played as an attack (issue 34, finding 3): a member who may run a
project's builds, but not read or change its variables, passes variables that make the build's programs print a
secure variable, reversed (masking catches the value, not its reverse)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.domain.job_protocol import job_specs
from chalicelib.domain.projects.request_variables import WITHHELD_NOTICE
from chalicelib.local.pump import SqsPump
from chalicelib.store import jobs as job_store
from chalicelib.store.models import BuildModel
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, Caller, member_of_role, unique

SECRET = "s3cret-of-the-project"
# the project's own scripts: it packages its sources with tar, and runs a script of its repository with bash
PACKAGING_YML = appveyor_yml(
    "build_script:",
    "  - tar -cf package.tar appveyor.yml",
    "  - bash -c 'echo packaged'",
    "  - echo variables FLAVOR=$FLAVOR",
    "cache:",
    "  - cached",
)
# GNU tar takes its options from TAR_OPTIONS: a compressor of the caller's runs in the build, with its variables.
# No list of refused names can hold every such variable a build's tools read: the secrets are withheld instead.
TAR_PRINTS_THE_SECRET = {"TAR_OPTIONS": "--use-compress-program='sh -c \"echo $SECRET | rev >&2; cat\"'"}


@pytest.fixture
def project(account: Account, git_server: GitServer, pump: SqsPump) -> BuildProject:
    """A project with a secure variable, SECRET, whose scripts run tar and bash."""
    project = BuildProject(account, git_server, {"appveyor.yml": PACKAGING_YML})
    reply = account.api.put(
        f"{project.path}/settings/environment-variables",
        [{"name": "SECRET", "value": {"isEncrypted": True, "value": SECRET}}],
    )
    assert reply.status == 204, reply.body
    return project


@pytest.fixture
def builder(account: Account) -> Caller:
    """A member whose role may run builds, and nothing else: not read or change the project's variables."""
    role = account.add_role(unique("builders"), {"RunProjectBuild"})
    return member_of_role(account, role["name"])


def start(project: BuildProject, caller: Caller, variables: dict[str, str]) -> Any:
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}
    return caller.post("/builds", {**body, "environmentVariables": variables})


def log_of(project: BuildProject, build: dict[str, Any]) -> str:
    finished = project.wait(build["version"])
    return project.log(finished["jobs"][0]["jobId"])


def assert_no_secret(log: str) -> None:
    assert SECRET not in log
    assert SECRET[::-1] not in log


def test_a_member_who_may_only_run_builds_cannot_print_a_secure_variable_with_start_variables(
    project: BuildProject, builder: Caller
) -> None:
    reply = start(project, builder, {**TAR_PRINTS_THE_SECRET, "FLAVOR": "debug"})

    assert reply.status == 200, reply.body
    log = log_of(project, reply.json)
    assert_no_secret(log)
    assert log.count(WITHHELD_NOTICE) == 1  # said once, at the top
    assert log.index(WITHHELD_NOTICE) < log.index("tar -cf")
    assert "variables FLAVOR=debug" in log  # the variables themselves are the build's
    assert "The build cache is not saved" in log  # what it made is not restored by a build that gets secrets


@pytest.mark.parametrize(
    "variables",
    [
        {"BASH_ENV": "$(echo $SECRET | rev >&2)"},
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager", "GIT_CONFIG_VALUE_0": "rev"},
        {"NODE_OPTIONS": "--require /proc/self/environ"},
        {"PERL5OPT": "-Mstrict"},
        {"PATH": "/tmp/evil:/usr/bin:/bin"},
        {"HOME": "/tmp/evil"},
        {"LD_PRELOAD": "/tmp/evil.so"},
        {"LD_AUDIT": "/tmp/evil.so"},
        {"BASH_FUNC_echo%%": "() { /usr/bin/env | rev; }"},
        {"path": "/tmp/evil"},  # whatever its case
    ],
    ids=lambda variables: next(iter(variables)),
)
def test_a_member_cannot_start_a_build_with_variables_that_change_how_programs_start(
    project: BuildProject, builder: Caller, variables: dict[str, str]
) -> None:
    reply = start(project, builder, {"FLAVOR": "debug", **variables})

    assert reply.status == 400, reply.body
    for name in variables:
        assert name in reply.json["message"]
    assert "FLAVOR" not in reply.json["message"]
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []


def test_bash_env_from_a_start_request_is_refused_even_for_the_administrator(project: BuildProject) -> None:
    reply = start(project, project.account.api, {"BASH_ENV": "$(echo $SECRET | rev >&2)"})

    assert reply.status == 400, reply.body
    assert "BASH_ENV" in reply.json["message"]
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []


def test_a_member_re_running_a_build_started_with_variables_gets_no_secure_variables(
    project: BuildProject, builder: Caller
) -> None:
    started = start(project, project.account.api, TAR_PRINTS_THE_SECRET)
    assert started.status == 200, started.body
    assert SECRET[::-1] in log_of(project, started.json)  # an administrator's build: its secrets decrypt

    again = builder.put("/builds", {"buildId": started.json["buildId"]})

    assert again.status == 200, again.body
    log = log_of(project, again.json)
    assert_no_secret(log)
    assert WITHHELD_NOTICE in log


def test_a_build_started_with_variables_by_a_member_stays_without_secrets_when_the_administrator_re_runs_it(
    project: BuildProject, builder: Caller
) -> None:
    started = start(project, builder, TAR_PRINTS_THE_SECRET)
    assert started.status == 200, started.body
    log_of(project, started.json)

    again = project.account.api.put("/builds", {"buildId": started.json["buildId"]})

    assert again.status == 200, again.body
    log = log_of(project, again.json)
    assert_no_secret(log)
    assert WITHHELD_NOTICE in log


def test_a_build_stored_with_a_refused_variable_runs_without_it_and_is_not_re_run(
    account: Account, git_server: GitServer
) -> None:
    # no pump: the build stays queued, as one queued before such names were refused
    project = BuildProject(account, git_server, {"appveyor.yml": PACKAGING_YML})
    queued = project.start(environmentVariables={"FLAVOR": "debug"})
    key = BuildModel(queued["projectId"], queued["buildId"])
    key.update(actions=[BuildModel.request_variables.set({"FLAVOR": "debug", "BASH_ENV": "$(rev)"})])
    (job,) = job_store.get_jobs([job["jobId"] for job in project.build(queued["version"])["jobs"]])

    spec = job_specs.job_spec(job)

    assert spec["variables"]["FLAVOR"] == "debug"
    assert "BASH_ENV" not in spec["variables"]
    assert any("BASH_ENV" in warning for warning in spec["warnings"])
    rerun = account.api.put("/builds", {"buildId": queued["buildId"]})
    assert rerun.status == 400, rerun.body
    assert "BASH_ENV" in rerun.json["message"]


def test_a_member_cannot_pass_bash_env_in_a_form_encoded_start_request(project: BuildProject, builder: Caller) -> None:
    body = (
        f"accountName={project.project['accountName']}&projectSlug={project.project['slug']}"
        "&environmentVariables[BASH_ENV]=%24%28echo+%24SECRET+%7C+rev%29"
    )
    reply = builder.post("/builds", raw=body.encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})

    assert reply.status == 400, reply.body
    assert "BASH_ENV" in reply.json["message"]
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []


@pytest.mark.parametrize("variables", [{"A=B": "x"}, {"A\0B": "x"}, {"NAME": "x\0y"}], ids=["equals", "nul", "value"])
def test_a_start_request_variable_no_environment_can_hold_is_a_400_not_a_failed_build(
    project: BuildProject, builder: Caller, variables: dict[str, str]
) -> None:
    reply = start(project, builder, variables)

    assert reply.status == 400, reply.body
    assert "environmentVariables" in reply.json["message"]
    assert project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"] == []
