"""A job's scripts run as on AppVeyor's Linux images: one Bash session from init to on_finish, and its ending rules
(exit 0, exit N, appveyor exit), end to end through real builds."""

from __future__ import annotations

import shutil

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account


@pytest.fixture
def make_project(account: Account, git_server: GitServer, pump: SqsPump):  # type: ignore[no-untyped-def]
    def make(*yml: str, **files: str) -> BuildProject:
        return BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*yml), **files})

    return make


def output(log: str) -> list[str]:
    """What a job's scripts printed, line by line: its log without the echoed commands."""
    return [line for line in log.splitlines() if not line.startswith("$ ")]


def test_variables_folder_and_functions_of_one_command_are_there_for_the_next_phase(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "install:",
        "  - export FOO=bar",
        "  - cd sub",
        "  - 'greet() { echo hi-$1; }'",
        "  - UNEXPORTED=kept",
        "  - set -o pipefail",
        "build_script:",
        '  - echo "$FOO"',
        "  - pwd",
        "  - greet x",
        '  - echo "unexported $UNEXPORTED"',
        "  - if false | true; then echo pipefail-off; else echo pipefail-on; fi",
        **{"sub/keep.txt": "x\n"},
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    printed = output(log)
    assert "bar" in printed
    assert any(line.endswith("/build/sub") for line in printed), log
    assert "hi-x" in printed
    assert "unexported kept" in printed
    assert "pipefail-on" in printed


def test_source_double_brackets_and_arrays_work(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "build_script:",
        "  - source settings.sh",
        '  - "[[ $SOURCED == y* ]] && echo double-brackets"',
        '  - arr=(a b c); echo "array ${arr[2]} of ${#arr[@]}"',
        **{"settings.sh": "SOURCED=yes\n"},
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "double-brackets" in output(log)
    assert "array c of 3" in output(log)


def test_exit_0_ends_the_job_green_at_once_without_on_success_or_on_finish(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "install:",
        "  - echo before the exit",
        "  - exit 0",
        "  - echo rest of install",
        "build_script:",
        "  - echo building",
        "on_success:",
        "  - echo on-success ran",
        "on_finish:",
        "  - echo on-finish ran",
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "before the exit" in output(log)
    for never in ("rest of install", "building", "on-success ran", "on-finish ran"):
        assert never not in output(log), log


def test_exit_3_ends_the_job_red_at_once_without_on_failure_or_on_finish(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "build_script:",
        "  - echo before the exit",
        "  - exit 3",
        "  - echo rest of the build",
        "on_failure:",
        "  - echo on-failure ran",
        "on_finish:",
        "  - echo on-finish ran",
    )

    build = project.run()

    (job,) = build["jobs"]
    log = project.log(job["jobId"])
    assert build["status"] == "failed" and job["status"] == "failed", log
    assert "before the exit" in output(log)
    assert "exited with code 3" in log
    assert job["message"] == (
        "The job's shell exited with code 3 in build_script: the job ends here as a failure (exit skips on_failure "
        "and on_finish)."
    )
    for never in ("rest of the build", "on-failure ran", "on-finish ran"):
        assert never not in output(log), log


def test_appveyor_exit_ends_the_job_green_after_on_success_and_on_finish(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "install:",
        "  - appveyor exit",
        "  - echo rest of install",
        "build_script:",
        "  - echo building",
        "on_success:",
        "  - echo on-success ran",
        "on_finish:",
        "  - echo on-finish ran",
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "on-success ran" in output(log) and "on-finish ran" in output(log)
    assert "rest of install" not in output(log) and "building" not in output(log), log


def test_a_failing_command_runs_on_failure_and_on_finish_in_the_same_shell(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "build_script:",
        "  - STEP=compiling",
        "  - 'false'",
        "  - echo never printed",
        "on_failure:",
        '  - echo "failed while $STEP"',
        "on_finish:",
        '  - echo "finished after $STEP"',
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "failed", log
    assert "Command exited with code 1" in log
    assert "never printed" not in output(log)
    assert "failed while compiling" in output(log) and "finished after compiling" in output(log)


def test_output_without_a_trailing_newline_is_logged_on_its_own_line(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "build_script:",
        "  - printf no-newline-here",
        "  - echo next command",
        "  - printf 'blank after\\n\\n'",
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    printed = output(log)
    assert printed.index("no-newline-here") + 1 == printed.index("next command"), log
    assert printed[printed.index("blank after") + 1] == "", log  # the command's own blank line, kept


def test_set_x_traces_the_commands_not_the_runners_own_lines(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project("build_script:", "  - set -x", "  - echo traced", "  - set +x", "  - echo untraced")

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert any(line.endswith("+ echo traced") for line in output(log)), log
    assert "conveyor" not in log.lower().replace("conveyor-job-", ""), log
    assert not any(line.endswith("echo untraced") for line in output(log)), log


def test_linux_flags_are_set_and_powershell_lines_are_skipped_when_disabled(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "environment:",
        "  APPVEYOR_YML_DISABLE_PS_LINUX: true",
        "build_script:",
        '  - echo "linux=$CI_LINUX windows=$CI_WINDOWS"',
        "  - ps: Write-Host from-powershell",
        "  - pwsh: Write-Host from-pwsh",
        "  - echo after",
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "linux=true windows=false" in output(log)
    assert log.count("Skipped on Linux: APPVEYOR_YML_DISABLE_PS_LINUX") == 2, log
    assert "after" in output(log)


@pytest.mark.skipif(shutil.which("pwsh") is not None, reason="pwsh is installed here: ps: lines run")
def test_a_powershell_line_fails_the_job_saying_pwsh_is_missing(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project("build_script:", "  - ps: Write-Host hi", "  - echo never printed")

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "failed", log
    assert log.count("has no PowerShell") == 1, log  # said once, not by the script and again by its phase
    assert "never printed" not in output(log)


def test_cmd_lines_are_skipped_on_linux_saying_so_and_plain_lines_run_in_bash(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "install:",
        "  - cmd: choco install windows-only-tool",
        "  - sh: echo from-sh",
        "  - echo from-plain",
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "Skipped on Linux: a 'cmd:' script runs on Windows images only (plain lines and 'sh:' run here)." in log
    assert "command not found" not in log, log  # choco never ran
    assert "from-sh" in output(log) and "from-plain" in output(log)
