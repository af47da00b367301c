"""Every key of AppVeyor's appveyor.yml reference is honoured, or named where the build shows it: a job that
needs what no executor here gives (services, a stack, hosts) fails at once saying so, and the Windows facilities
a Linux runner has no use for are named in the build's messages. None is ignored in silence."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.domain.configuration import unhonoured
from chalicelib.domain.configuration.yamlconfig import KEYS
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account

# AppVeyor's appveyor.yml reference (https://www.appveyor.com/docs/appveyor-yml/), its top-level keys in its order
REFERENCE_KEYS = (
    "version", "pull_requests", "branches", "skip_tags", "skip_non_tags", "skip_commits", "only_commits",
    "skip_branch_with_pr", "max_jobs", "image", "init", "clone_folder", "shallow_clone", "clone_depth", "hosts",
    "environment", "matrix", "cache", "services", "install", "assembly_info", "dotnet_csproj", "platform",
    "configuration", "build", "before_build", "before_package", "after_build", "build_script", "test_script",
    "before_test", "test", "after_test", "artifacts", "before_deploy", "deploy", "deploy_script", "after_deploy",
    "on_success", "on_failure", "on_finish", "notifications", "nuget", "xamarin", "stack", "build_cloud",
    "clone_script", "for",
)  # fmt: skip
BUILD = ["build_script:", "  - echo built"]
# a value for each key the service does not honour, as a user would write it
UNHONOURED_YML = {
    "build_cloud": ["build_cloud: my-cloud"],
    "assembly_info": ["assembly_info:", "  patch: true"],
    "dotnet_csproj": ["dotnet_csproj:", "  patch: true"],
    "nuget": ["nuget:", "  account_feed: true"],
    "xamarin": ["xamarin:", "  android: true"],
    "pull_requests": ["pull_requests:", "  do_not_increment_build_number: true"],
    "build": ["build:", "  project: app.sln"],
    "test": ["test:", "  assemblies:", "    - '**\\*.Tests.dll'"],
    "services": ["services:", "  - postgresql"],
    "stack": ["stack: python 3.12"],
    "hosts": ["hosts:", "  db.local: 127.0.0.1"],
}


def test_every_key_of_appveyors_reference_is_read_and_sorted_as_honoured_refused_or_warned() -> None:
    sorted_keys = [*unhonoured.HONOURED, *unhonoured.REFUSED, *unhonoured.WARNED]

    assert sorted(sorted_keys) == sorted(set(sorted_keys))  # each key in one kind only
    assert set(REFERENCE_KEYS) <= set(KEYS)  # appveyor.yml takes every key of the reference
    assert set(KEYS) == set(sorted_keys)  # and says what it does with each
    assert set(UNHONOURED_YML) == {*unhonoured.REFUSED, *unhonoured.WARNED}  # each exercised below


def messages_of(project: BuildProject, build: dict[str, Any]) -> list[str]:
    return [message["message"] for message in project.build(build["version"])["messages"]]


@pytest.mark.parametrize("key", list(unhonoured.WARNED))
def test_a_setting_a_linux_runner_has_no_use_for_is_named_in_the_builds_messages(
    key: str, account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    script = [] if key == "build" else BUILD  # a build_script replaces MSBuild: build: settings then do nothing
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*script, *UNHONOURED_YML[key])})

    build = project.run()

    assert build["status"] == "success"
    [said] = messages_of(project, build)
    assert said.startswith(f"appveyor.yml {key}: is not honoured: ")


def test_a_job_needing_services_a_stack_or_hosts_fails_at_once_naming_each(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    lines = [line for key in unhonoured.REFUSED for line in UNHONOURED_YML[key]]
    project = BuildProject(
        account, git_server, {"appveyor.yml": appveyor_yml(*BUILD, "  - echo ran > ran.txt", *lines)}
    )

    build = project.run()

    assert build["status"] == "failed"
    [job] = build["jobs"]
    message = project.account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    text = " ".join(entry["message"] for entry in message) + project.log(job["jobId"])
    for key in unhonoured.REFUSED:
        assert f"appveyor.yml {key}: is not honoured" in text, text
    assert "Running build_script" not in text  # it never ran


def test_a_job_with_more_cache_entries_than_a_job_saves_fails_at_once_naming_the_cap(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    entries = [f"  - folder{index}" for index in range(unhonoured.MAX_CACHE_ENTRIES + 1)]
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD, "cache:", *entries)})

    build = project.run()

    assert build["status"] == "failed"
    [job] = build["jobs"]
    message = project.account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    text = " ".join(entry["message"] for entry in message) + project.log(job["jobId"])
    assert f"cache: has 17 entries: a job saves at most {unhonoured.MAX_CACHE_ENTRIES}" in text, text
    assert "Running build_script" not in text


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            ["cache:", *(f"  - folder{index}" for index in range(unhonoured.MAX_CACHE_ENTRIES + 1))],
            f"cache: has 17 entries: a job saves at most {unhonoured.MAX_CACHE_ENTRIES}",
        ),
        (UNHONOURED_YML["services"], "appveyor.yml services: is not honoured"),
    ],
    ids=["cache", "services"],
)
def test_a_job_refused_at_start_is_refused_again_when_run_again(
    account: Account, git_server: GitServer, pump: SqsPump, lines: list[str], said: str
) -> None:
    """Re-run incomplete (any member who may run builds) ran the job the service had refused at the build's start:
    its 17 cache: entries, or without the services it needs."""
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*BUILD, *lines)})
    build = project.run()
    assert build["status"] == "failed"

    again = project.account.api.put("/builds", {"buildId": build["buildId"], "reRunIncomplete": True})
    assert again.status == 200, again.body
    rerun = project.wait(build["version"])

    assert rerun["status"] == "failed"
    [job] = rerun["jobs"]
    message = project.account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    text = " ".join(entry["message"] for entry in message) + project.log(job["jobId"])
    assert said in text, text
    assert "Running build_script" not in text


def test_a_build_agents_machine_provides_services_itself_and_the_build_says_so(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    reply = account.api.post("/build-agents", {"name": "db-box", "images": ["Db Box"]})
    assert reply.status == 200, reply.body
    yml = appveyor_yml("image: Db Box", *BUILD, *UNHONOURED_YML["services"])
    project = BuildProject(account, git_server, {"appveyor.yml": yml})

    build = project.start()  # waits for an agent: no job fails for its services

    assert build["status"] == "queued"
    assert messages_of(project, build) == [
        "appveyor.yml services: is not set up by Conveyor: a build agent's machine provides it itself."
    ]


def test_before_package_runs_between_the_build_and_after_build(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    yml = appveyor_yml(*BUILD, "before_package:", "  - echo packaging now", "after_build:", "  - echo after")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success" and build["messages"] == []
    assert log.index("built") < log.index("packaging now") < log.index("after")


def test_build_written_as_appveyors_words_builds_and_msbuild_mode_says_a_linux_runner_skips_it(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    scripted = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build: Script", *BUILD)})
    msbuild = BuildProject(
        account, git_server, {"appveyor.yml": appveyor_yml("build: MSBuild", "test_script:", "  - echo tested")}
    )

    built, skipped = scripted.run(), msbuild.run()

    assert built["status"] == "success", built
    assert "built" in scripted.log(built["jobs"][0]["jobId"])
    assert skipped["status"] == "success", skipped
    log = msbuild.log(skipped["jobs"][0]["jobId"])
    assert "MSBuild is not available on this Linux runner: the build phase is skipped (use build_script)." in log
    assert "tested" in log
