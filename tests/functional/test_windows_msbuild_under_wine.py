"""appveyor.yml's build: (MSBuild mode, AppVeyor's default) on a build agent on Windows, run for real under Wine
(test_windows_agent_under_wine.py's agent): MSBuild runs in the build folder with the project, configuration,
platform, verbosity and /m the file asks for, in the environment earlier lines left, and its exit code decides the
build. There is no MSBuild under Wine: a fake ``msbuild.cmd`` first on the agent's PATH (WINEPATH) echoes what it
was given and exits with the code the job's ``FAKE_MSBUILD_EXIT`` says; without it, there is no MSBuild anywhere."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject
from tests.functional.test_windows_agent_under_wine import (
    MISSING,
    PYTHON,
    WINDOWS,
    WineAgent,
    finished_with_log,
    running_agent,
    windows_project,
)
from tests.gitserver import GitServer
from tests.support import Account

pytestmark = pytest.mark.skipif(MISSING is not None and not os.environ.get("CI"), reason=str(MISSING))

FAKE_FOLDER = f"fake msbuild {os.getpid()}"  # in the Wine prefix's C:\, this test process's own (a space: quoted)
FAKE_MSBUILD = "\r\n".join(
    [
        "@echo fake msbuild in %CD% with %FROM_BEFORE_BUILD%: %*",
        "@exit /b %FAKE_MSBUILD_EXIT%",
        "",
    ]
)
BUILD = ["build:", "  project: App.sln", "  verbosity: quiet", "  parallel: true", "  publish_nuget: true"]


@pytest.fixture
def fake_msbuild() -> Iterator[Path]:
    """``C:\\fake msbuild <pid>\\msbuild.cmd`` in the Wine prefix, removed after the test."""
    folder = WINDOWS / "prefix" / "drive_c" / FAKE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "msbuild.cmd").write_bytes(FAKE_MSBUILD.encode())
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def msbuild_agent(account: Account, api_url: str, pump: SqsPump, fake_msbuild: Path) -> Iterator[WineAgent]:
    """The Windows agent, with the fake msbuild.cmd's folder first on its PATH."""
    yield from running_agent(account, api_url, WINEPATH=f"C:\\{FAKE_FOLDER}")


@pytest.fixture
def agent_without_msbuild(account: Account, api_url: str, pump: SqsPump) -> Iterator[WineAgent]:
    """The Windows agent as Wine has it: no MSBuild on its PATH, no Visual Studio, no dotnet."""
    yield from running_agent(account, api_url)


def msbuild_project(account: Account, git_server: GitServer, exit_code: int, *lines: str) -> BuildProject:
    """A Windows project built by MSBuild (the fake's exit code ``exit_code``) after before_build set a variable and
    changed folder."""
    return windows_project(
        account,
        git_server,
        "environment:",
        f"  FAKE_MSBUILD_EXIT: {exit_code}",
        "configuration: Release",
        "platform: Any CPU",
        "clone_script:",
        "  - cmd: mkdir sub",
        "before_build:",
        "  - set FROM_BEFORE_BUILD=a variable of before_build",
        "  - cd sub",
        *BUILD,
        *lines,
    )


def test_build_runs_msbuild_in_the_build_folder_with_the_files_settings(
    account: Account, git_server: GitServer, msbuild_agent: WineAgent
) -> None:
    project = msbuild_project(account, git_server, 0, "after_build:", "  - echo after the build in %CD%")

    build, log = finished_with_log(project, msbuild_agent)

    assert build["status"] == "success", log
    folder = f"C:\\projects\\{project.project['slug']}"
    arguments = 'App.sln /p:Configuration=Release /p:Platform="Any CPU" /verbosity:quiet /m'
    assert f'$ "C:\\{FAKE_FOLDER}\\msbuild.cmd" {arguments}' in log  # the command line, in the log
    assert f"fake msbuild in {folder} with a variable of before_build: {arguments}" in log
    assert f"after the build in {folder}\\sub" in log  # the session goes on where before_build left it
    assert "appveyor.yml build: publish_nuget is not done" in log  # said once, as the build's messages do
    assert log.count("publish_nuget is not done") == 1
    assert [message["message"][:47] for message in build["messages"]] == [
        "appveyor.yml build: publish_nuget is not done: "
    ]


def test_a_failing_msbuild_fails_the_build_then_on_failure_runs(
    account: Account, git_server: GitServer, msbuild_agent: WineAgent
) -> None:
    project = msbuild_project(
        account,
        git_server,
        3,
        "after_build:",
        "  - echo never after a failed build",
        "on_failure:",
        "  - echo on_failure ran",
    )

    build, log = finished_with_log(project, msbuild_agent)

    assert build["status"] == "failed", log
    assert "Command exited with code 3 in build: " in log
    assert "on_failure ran" in log and "\nnever after a failed build" not in log


def test_with_no_msbuild_anywhere_the_job_fails_saying_what_to_install(
    account: Account, git_server: GitServer, agent_without_msbuild: WineAgent
) -> None:
    project = msbuild_project(account, git_server, 0, "on_failure:", "  - echo on_failure ran")

    build, log = finished_with_log(project, agent_without_msbuild)

    assert build["status"] == "failed", log
    assert "MSBuild was not found on this build agent" in log and "Build Tools" in log
    assert "fake msbuild" not in log and "on_failure ran" in log


@pytest.fixture
def argv_agent(account: Account, api_url: str, pump: SqsPump) -> Iterator[WineAgent]:
    """The Windows agent with an ``msbuild.cmd`` first on its PATH that prints the arguments a program gets of its
    command line (Windows' CPython splits it as the C runtime does, as MSBuild reads it), as JSON."""
    folder = WINDOWS / "prefix" / "drive_c" / f"argv msbuild {os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    python = "Z:" + str(PYTHON.resolve()).replace("/", "\\")
    program = "import sys, json; print('arguments ' + json.dumps(sys.argv[1:]))"
    (folder / "msbuild.cmd").write_bytes(f'@"{python}" -c "{program}" %*\r\n'.encode())
    try:
        yield from running_agent(account, api_url, WINEPATH=f"C:\\{folder.name}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_project_and_platform_reach_msbuild_as_the_arguments_they_are_never_as_switches(
    account: Account, git_server: GitServer, argv_agent: WineAgent
) -> None:
    """build: project: ending in a backslash, quoted, ended in an escaped quote: the platform quoted after it split
    out, its /logger: an argument of its own (MSBuild loads the logger's DLL). What cmd.exe reads (&, |, ^, !VAR!)
    stays text."""
    project = windows_project(
        account,
        git_server,
        "platform: 'x /logger:C:\\evil.dll y'",
        # nothing cmd.exe reads as more than text (%VAR% is not here: Wine's cmd.exe expands it again in the fake's %*)
        "configuration: 'Debug & echo injected !PATH! ^| more'",
        "build:",
        "  project: 'My Folder\\'",
        "clone_script:",
        "  - cmd: echo no clone",
    )

    build, log = finished_with_log(project, argv_agent)

    assert build["status"] == "success", log
    configuration = "/p:Configuration=Debug & echo injected !PATH! ^| more"
    expected = ["My Folder\\", configuration, "/p:Platform=x /logger:C:\\evil.dll y", "/verbosity:minimal"]
    assert f"arguments {json.dumps(expected)}" in log
    assert "\ninjected" not in log
