"""A build's version taken by another build, played as an attack (issue 34, finding 10): a build sets its version
with ``appveyor UpdateBuild -Version`` to the one the project's next build would take, to stop that start."""

from __future__ import annotations

import time
from typing import Any

from tests.builds import FINISHED, WAIT_SECONDS, BuildProject, appveyor_yml

# the project's versions are 1.0.{build}, the default
TAKES_THE_NEXT_VERSION = appveyor_yml(
    "build_script:",
    "  - appveyor UpdateBuild -Version 1.0.$((APPVEYOR_BUILD_NUMBER + 1))",
    "  - echo version now $APPVEYOR_BUILD_VERSION",
)
# appveyor.yml's own format: the project's refuses a version it gives a later build (the second review's attack
# test, test_build_version_squatting_attacks.py), appveyor.yml's is known only at the next start, which skips it
TAKES_THE_NEXT_VERSION_OF_ITS_FORMAT = appveyor_yml(
    "version: 2.0.{build}",
    "build_script:",
    "  - appveyor UpdateBuild -Version 2.0.$((APPVEYOR_BUILD_NUMBER + 1))",
)


def finished(project: BuildProject, build_id: int) -> dict[str, Any]:
    """The build once it finished, followed by id: its scripts may change its version."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        history = project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"]
        (listed,) = [build for build in history if build["buildId"] == build_id]
        if listed["status"] in FINISHED:
            return project.build(listed["version"])
        assert time.monotonic() < deadline, f"build {build_id} is still {listed['status']}"
        time.sleep(0.1)


def start(project: BuildProject, **fields: Any) -> Any:
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"], **fields}
    return project.account.api.post("/builds", body)


def test_a_build_that_takes_the_next_builds_version_does_not_stop_the_next_start(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": TAKES_THE_NEXT_VERSION_OF_ITS_FORMAT})
    squatter = finished(project, project.start()["buildId"])
    assert (squatter["buildNumber"], squatter["version"]) == (1, "2.0.2")  # the version build 2 would take

    reply = start(project)

    assert reply.status == 200, reply.body
    assert (reply.json["buildNumber"], reply.json["version"]) == (3, "2.0.3")  # number 2 skipped, as a taken one is
    assert start(project).json["version"] == "2.0.4"


def test_a_pull_requests_build_cannot_change_its_version(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo on master")})
    head = project.repository.commit({"appveyor.yml": TAKES_THE_NEXT_VERSION}, branch="feature")
    project.repository.set_ref("refs/pull/7/head", head)

    queued = start(project, pullRequestId=7)
    assert queued.status == 200, queued.body
    build = finished(project, queued.json["buildId"])

    assert build["version"] == "1.0.1"
    log = project.log(build["jobs"][0]["jobId"])
    assert "A pull request's build keeps its version (1.0.1)" in log  # the runner prints the service's refusal
    assert build["status"] == "failed"  # the command failed, and with it the script
    reply = start(project)
    assert (reply.status, reply.json["version"]) == (200, "1.0.2")


def test_a_build_that_takes_the_next_version_in_another_case_does_not_stop_the_next_start(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "version: v{build}",
                "build_script:",
                "  - appveyor UpdateBuild -Version V$((APPVEYOR_BUILD_NUMBER + 1))",
            )
        }
    )
    squatter = finished(project, project.start()["buildId"])
    assert squatter["version"] == "V2"  # versions are unique whatever their case: build 2's v2 is taken

    reply = start(project)

    assert (reply.status, reply.json["version"]) == (200, "v3"), reply.body
