"""appveyor.yml's for: items and its list of configurations in real builds: the branch built chooses the settings,
an item for some jobs of the matrix reaches those jobs' runners only, and the clone settings reach the clone."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_webhooks import HookProject, git_server, skipped, started, variables_of
from tests.gitserver import GitServer
from tests.support import Account, assert_refused

__all__ = ["git_server"]  # the webhooks' fixture: hosted providers' URLs point at the test git server

FOR_MAIN = appveyor_yml(
    "environment:",
    "  GREETING: common",
    "build_script:",
    "  - echo GREETING=$GREETING FLAVOR=$FLAVOR",
    "for:",
    "  - branches:",
    "      only: [main]",
    "    environment:",
    "      GREETING: main",
    "      FLAVOR: release",
)


def with_branches(project: BuildProject, *names: str) -> BuildProject:
    for name in names:
        project.repository.branch(name, project.first_commit)
    return project


def test_a_for_item_for_main_sets_its_variables_in_builds_of_main_and_not_of_other_branches(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = with_branches(BuildProject(account, git_server, {"appveyor.yml": FOR_MAIN}), "main", "feature")

    main, feature = project.run(branch="main"), project.run(branch="feature")

    assert (main["status"], feature["status"]) == ("success", "success")
    assert "GREETING=main FLAVOR=release" in project.log(main["jobs"][0]["jobId"])
    assert "GREETING=common FLAVOR=\n" in project.log(feature["jobs"][0]["jobId"])


LIST = appveyor_yml(
    "- branches:",
    "    only: [main]",
    "  version: main-{build}",
    "  environment: {CHOSEN: main}",
    "- branches:",
    "    except: ['/^wip-/']",
    "  environment: {CHOSEN: any but wip}",
)


def test_a_list_of_configurations_builds_each_branch_with_the_one_that_selects_it(
    account: Account, git_server: GitServer
) -> None:
    project = with_branches(BuildProject(account, git_server, {"appveyor.yml": LIST}), "main", "feature", "wip-1")

    main, feature = project.start(branch="main"), project.start(branch="feature")
    refused = account.api.post(
        "/builds", {"accountName": account.name, "projectSlug": project.project["slug"], "branch": "wip-1"}
    )

    assert (variables_of(main)["CHOSEN"], main["version"].split("-")[0]) == ("main", "main")
    assert variables_of(feature)["CHOSEN"] == "any but wip"
    assert "none of its 2 configurations is for branch 'wip-1'" in assert_refused(refused, 400)
    assert len(account.api.get(project.path + "/history?recordsNumber=10").json["builds"]) == 2


def test_a_push_to_a_branch_no_configuration_of_the_list_selects_builds_nothing_and_says_why(
    account: Account, git_server: GitServer
) -> None:
    hook = HookProject(account, git_server, provider="git", yml=LIST)
    hook.repository.branch("wip-2", hook.head)

    message = skipped(hook.post({"ref": "refs/heads/wip-2"}))

    assert message.startswith("Not built: ") and "for branch 'wip-2'" in message
    assert hook.builds() == []


JOB_ITEMS = appveyor_yml(
    "environment:",
    "  SHARED: common",
    "  matrix:",
    "    - FLAVOR: plain",
    "    - FLAVOR: special",
    "build_script:",
    "  - echo $FLAVOR built with the common script, SHARED=$SHARED",
    "for:",
    "  - matrix:",
    "      only:",
    "        - FLAVOR: special",
    "    environment:",
    "      SHARED: special",
    "    build_script:",
    "      - echo $FLAVOR built with its own script, SHARED=$SHARED",
    "    platform: x64",
)


def test_a_for_item_for_some_jobs_reaches_those_jobs_runners_only(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": JOB_ITEMS})

    build = project.run()

    assert build["status"] == "success"
    plain, special = (project.log(job["jobId"]) for job in build["jobs"])
    assert "plain built with the common script, SHARED=common" in plain and "not applied" not in plain
    assert "special built with its own script, SHARED=special" in special
    assert "for[0]: platform not applied to this job" in special  # AppVeyor ignores it there: the log says so


def test_a_for_item_skips_its_jobs_in_a_push_to_a_branch_it_excludes(account: Account, git_server: GitServer) -> None:
    yml = JOB_ITEMS + appveyor_yml(
        "  - matrix:", "      only: [{FLAVOR: special}]", "    branches:", "      except: [feature]"
    )
    hook = HookProject(account, git_server, provider="git", yml=yml)
    hook.repository.branch("feature", hook.head)

    on_feature = started(hook.post({"ref": "refs/heads/feature"}))
    on_master = started(hook.post({"ref": "refs/heads/master"}))

    assert [job["name"] for job in jobs_of(account, hook, on_feature)] == ["Environment: FLAVOR=plain"]
    assert len(jobs_of(account, hook, on_master)) == 2
    assert variables_of(on_feature)["APPVEYOR_JOB_NUMBER"] == "1"


def jobs_of(account: Account, hook: HookProject, build: dict[str, Any]) -> list[dict[str, Any]]:
    reply = account.api.get(f"{hook.path}/build/{build['version']}")
    assert reply.status == 200, reply.body
    jobs: list[dict[str, Any]] = reply.json["build"]["jobs"]
    return jobs


@pytest.mark.parametrize("setting", ["clone_depth: 1", "shallow_clone: true"])
def test_clone_depth_and_shallow_clone_fetch_the_commit_alone(
    account: Account, git_server: GitServer, pump: SqsPump, setting: str
) -> None:
    files = {"appveyor.yml": appveyor_yml(setting, "build_script:", "  - cat .git/shallow")}
    project = BuildProject(account, git_server, files)
    head = project.repository.commit({**files, "second.txt": "a later commit"})

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "(depth 1)" in log and head in log  # .git/shallow names the one commit fetched


def test_a_clone_folder_the_runner_cannot_use_is_named_in_the_log(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("clone_folder: /projects/app")})

    build = project.run()

    assert "clone_folder is not used on this runner" in project.log(build["jobs"][0]["jobId"])
