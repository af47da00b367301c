"""A second review of issue 34, finding 10, as an attacker: builds take, with ``UpdateBuild -Version``, the versions
the project's next builds would take, more of them than a start tries numbers for (16), to stop every start. The
builds' scripts call the job protocol as the runner does (their jobs claimed here, as dispatch claims them)."""

from __future__ import annotations

from typing import Any

from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_untrusted_build_attacks import claimed
from tests.gitserver import GitServer
from tests.support import Account

SQUATTED = 17  # one more than a start's attempts


def start(project: BuildProject) -> Any:
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}
    return project.account.api.post("/builds", body)


def take_version(account: Account, project: BuildProject, version: str) -> Any:
    """A new build of the project, whose script sets its version to ``version``: the service's answer."""
    started = start(project)
    assert started.status == 200, started.body
    job_id, runner = claimed(account, project, started.json["version"])
    return runner.put(f"/{job_id}/build", {"version": version})


def test_seventeen_builds_that_took_the_next_versions_do_not_stop_the_next_start(
    account: Account, git_server: GitServer
) -> None:
    # appveyor.yml's format is not the project's: the versions are not refused when taken, and are skipped at start
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("version: 2.0.{build}")})
    for squatter in range(SQUATTED):  # builds 1 to 17 take 2.0.18 to 2.0.34
        taken = take_version(account, project, f"2.0.{SQUATTED + 1 + squatter}")
        assert taken.status == 204, taken.body

    reply = start(project)

    assert reply.status == 200, reply.body
    assert (reply.json["buildNumber"], reply.json["version"]) == (2 * SQUATTED + 1, f"2.0.{2 * SQUATTED + 1}")
    assert start(project).json["version"] == f"2.0.{2 * SQUATTED + 2}"


def test_a_build_cannot_take_a_version_the_projects_format_gives_a_build_not_yet_started(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})

    ahead = take_version(account, project, "1.0.40")  # the project's format is 1.0.{build}: build 40's version
    next_one = take_version(account, project, "1.0.3")  # build 2 takes build 3's
    own_past = take_version(account, project, "1.0.1")  # build 3 takes the version of build 1, which has it
    a_release = take_version(account, project, "3.1.4")  # no build's version by the format: taken

    assert ahead.status == 409, ahead.body
    assert "which has not started yet" in ahead.json["message"]
    assert next_one.status == 409, next_one.body
    assert own_past.status == 409, own_past.body  # build 1 has it
    assert a_release.status == 204, a_release.body
    reply = start(project)
    assert (reply.status, reply.json["version"]) == (200, "1.0.5")
