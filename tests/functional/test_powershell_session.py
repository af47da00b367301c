"""PowerShell in a job, as on AppVeyor's Linux images: one pwsh session per job beside its Bash session, the two
exchanging environment variables and the current folder both ways at each PowerShell script.

This machine's registries have no PowerShell: the tests of the bridge's PowerShell side run where ``pwsh`` is
installed and are skipped here, saying so. Bash's side (the session started once, what crosses each way, ``exit``)
is tested everywhere with a stand-in ``pwsh`` the build brings (tests/standins/pwsh.py), which speaks the bridge's
protocol and runs each script in Bash."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account

STAND_IN = (Path(__file__).parents[1] / "standins" / "pwsh.py").read_text()
NO_PWSH = "pwsh is not installed (no registry of this machine has PowerShell): the bridge's PowerShell side is untested"
USE_STAND_IN = ["  - mkdir -p bin sub && cp pwsh.py bin/pwsh && chmod +x bin/pwsh", '  - export PATH="$PWD/bin:$PATH"']


@pytest.fixture
def make_project(account: Account, git_server: GitServer, pump: SqsPump):  # type: ignore[no-untyped-def]
    def make(*yml: str, stand_in: bool = True) -> BuildProject:
        files = {"appveyor.yml": appveyor_yml(*yml), "sub/keep.txt": "x\n"}
        if stand_in:
            files["pwsh.py"] = STAND_IN
        return BuildProject(account, git_server, files)

    return make


def output(log: str) -> list[str]:
    return [line for line in log.splitlines() if not line.startswith("$ ")]


def test_bash_and_powershell_exchange_variables_and_the_folder_both_ways_in_one_powershell_session(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    project = make_project(
        "install:",
        *USE_STAND_IN,
        "  - export FROM_BASH=b1 REMOVED_IN_PS=here",
        "build_script:",
        '  - ps: echo "ps sees $FROM_BASH in $PWD"',
        "  - ps: export FROM_PS=p1; unset REMOVED_IN_PS; cd sub",
        '  - echo "bash sees ${FROM_PS-nothing} ${REMOVED_IN_PS-unset} in $PWD"',
        "  - export FROM_BASH=b2; cd ..",
        '  - ps: echo "ps sees $FROM_BASH $FROM_PS in $PWD"',
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    printed = output(log)
    assert any(re.fullmatch(r"ps sees b1 in /.*/build", line) for line in printed), log
    assert any(re.fullmatch(r"bash sees p1 unset in /.*/build/sub", line) for line in printed), log
    assert any(re.fullmatch(r"ps sees b2 p1 in /.*/build", line) for line in printed), log
    sessions = {line.split()[2] for line in printed if line.startswith("stand-in pwsh ")}
    assert len(sessions) == 1, log  # three scripts, one PowerShell process
    assert "stand-in pwsh" in log and "run 3" in log, log


def test_exit_in_powershell_ends_its_session_and_its_code_fails_the_job(make_project) -> None:  # type: ignore[no-untyped-def]
    passing = make_project(
        "install:", *USE_STAND_IN, "build_script:", "  - ps: exit 0", "  - ps: echo next", "  - echo after"
    )
    failing = make_project("install:", *USE_STAND_IN, "build_script:", "  - ps: exit 3", "  - echo never printed")

    passed, failed = passing.run(), failing.run()

    passed_log = passing.log(passed["jobs"][0]["jobId"])
    failed_log = failing.log(failed["jobs"][0]["jobId"])
    assert passed["status"] == "success", passed_log
    assert "PowerShell exited with code 0; the next PowerShell script starts a new session." in passed_log
    assert "next" in output(passed_log) and "after" in output(passed_log)
    pids = [line.split()[2] for line in output(passed_log) if line.startswith("stand-in pwsh ")]
    assert len(set(pids)) == 2, passed_log  # the script after exit ran in a new session
    assert failed["status"] == "failed", failed_log
    assert "PowerShell exited with code 3" in failed_log
    assert "Command exited with code 3" in failed_log
    assert "never printed" not in output(failed_log)


def test_a_powershell_script_that_throws_fails_the_job_gracefully(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "install:", *USE_STAND_IN, "build_script:", "  - ps: throw boom", "on_failure:", "  - echo on-failure ran"
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "failed", log
    assert "Command executed with exception: boom" in output(log)
    assert "on-failure ran" in output(log)


@pytest.mark.skipif(shutil.which("pwsh") is None, reason=NO_PWSH)
def test_real_powershell_shares_variables_folder_and_its_own_session_with_bash(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "install:",
        "  - export FROM_BASH=b1",
        "build_script:",
        '  - ps: Write-Host "ps sees $env:FROM_BASH"; $kept = "k1"; function Greet($who) { "hi-$who" }',
        "  - ps: $env:FROM_PS = 'p1'; Set-Location sub",
        '  - echo "bash sees $FROM_PS in $PWD"',
        '  - ps: Write-Host "kept $kept"; Greet x',
        stand_in=False,
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    printed = output(log)
    assert "ps sees b1" in printed
    assert any(re.fullmatch(r"bash sees p1 in /.*/build/sub", line) for line in printed), log
    assert "kept k1" in printed and "hi-x" in printed


@pytest.mark.skipif(shutil.which("pwsh") is None, reason=NO_PWSH)
def test_real_powershell_throw_fails_and_a_native_exit_code_does_not(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        "build_script:",
        "  - ps: bash -c 'exit 4'; Write-Host \"native code $LASTEXITCODE\"",
        "  - ps: Set-AppveyorBuildVariable -Name FROM_CMDLET -Value c1",
        '  - echo "bash sees $FROM_CMDLET"',
        "  - ps: throw 'boom'",
        stand_in=False,
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "failed", log
    printed = output(log)
    assert "native code 4" in printed
    assert "bash sees c1" in printed
    assert "Command executed with exception: boom" in printed
