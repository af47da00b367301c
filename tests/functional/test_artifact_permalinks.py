"""The artifact permalink, ``GET /api/projects/{account}/{slug}/artifacts/{fileName}``: the file as the newest
successful build (of a branch, a pull request, a job name, or any finished build with ``all=true``) left it, as
AppVeyor's clients download it."""

from __future__ import annotations

import pytest
import requests

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, Caller, assert_refused

# each build's file says which build made it; FAIL=1 fails a build before its artifacts
YML = appveyor_yml(
    "environment:",
    "  matrix:",
    "    - FLAVOR: plain",
    "build_script:",
    '  - test -z "$FAIL"',
    "  - mkdir -p out && echo $APPVEYOR_BUILD_VERSION-$FLAVOR > out/app.txt",
    "artifacts:",
    "  - path: out/app.txt",
)


@pytest.fixture
def project(git_server: GitServer, pump: SqsPump, account: Account) -> BuildProject:
    return BuildProject(account, git_server, {"appveyor.yml": YML})


def fetch(project: BuildProject, query: str = "", file_name: str = "out/app.txt", caller: Caller | None = None) -> str:
    """The permalink's file, followed through its redirect (asked by the owner unless ``caller``); or the
    refusal's message."""
    reply = (caller or project.account.api).get(f"{project.path}/artifacts/{file_name}{query}")
    if reply.status != 302:
        return f"{reply.status} {reply.json['message']}"
    return requests.get(reply.headers["Location"], timeout=10).text.strip()


def test_the_permalink_serves_the_newest_successful_builds_file_of_a_branch_a_pull_request_or_any(
    project: BuildProject,
) -> None:
    master = project.run()
    assert master["status"] == "success"
    failed = project.run(environmentVariables={"FAIL": "1"})
    assert failed["status"] == "failed"
    assert fetch(project) == f"{master['version']}-plain"  # the failed build is passed over
    assert fetch(project, "?all=true") == f"404 Artifact 'out/app.txt' not found in build {failed['version']}."

    head = project.repository.commit({"appveyor.yml": YML, "pr.txt": "x"}, branch="feature")
    project.repository.set_ref("refs/pull/7/head", head)
    feature = project.run(branch="feature")
    pull_request = project.run(pullRequestId=7)
    assert (feature["status"], pull_request["status"]) == ("success", "success")

    assert fetch(project) == f"{pull_request['version']}-plain"
    assert fetch(project, "?branch=master") == f"{pull_request['version']}-plain"  # a PR's branch is its base
    assert fetch(project, "?branch=master&pr=false") == f"{master['version']}-plain"
    assert fetch(project, "?branch=feature&pr=false") == f"{feature['version']}-plain"
    assert fetch(project, "?pr=true") == f"{pull_request['version']}-plain"
    assert fetch(project, "?branch=nowhere").startswith("404 No successful build")
    assert (
        fetch(project, file_name="out/other.txt")
        == f"404 Artifact 'out/other.txt' not found in build {pull_request['version']}."
    )
    assert "pr" in assert_refused(project.account.api.get(f"{project.path}/artifacts/out/app.txt?pr=maybe"), 400)

    # Made public, a README's link passes over pull requests' builds (a fork's file is not the branch's) unless
    # pr says otherwise; a key still gets AppVeyor's answer.
    settings = project.account.api.get(f"{project.path}/settings").json["settings"]
    assert project.account.api.put("/projects", {**settings, "isPrivate": False}).status == 204
    visitor = Caller(project.account.client, None, "/api")
    assert fetch(project, "?branch=master", caller=visitor) == f"{master['version']}-plain"
    assert fetch(project, "?branch=master&pr=true", caller=visitor) == f"{pull_request['version']}-plain"
    assert fetch(project, "?branch=master") == f"{pull_request['version']}-plain"


def test_a_build_of_several_jobs_needs_the_jobs_name(account: Account, git_server: GitServer, pump: SqsPump) -> None:
    matrix = YML.replace("    - FLAVOR: plain", "    - FLAVOR: one\n    - FLAVOR: two")
    project = BuildProject(account, git_server, {"appveyor.yml": matrix})
    build = project.run()
    assert build["status"] == "success"
    assert fetch(project).startswith("400 The build has 2 jobs: name one with job= ('Environment: FLAVOR=one'")
    assert fetch(project, "?job=Environment%3A%20FLAVOR%3Dtwo") == f"{build['version']}-two"
