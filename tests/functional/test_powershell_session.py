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
from typing import Any, NamedTuple

import pytest

from tests.builds import appveyor_yml
from tests.functional.test_script_session import output

STAND_IN = (Path(__file__).parents[1] / "standins" / "pwsh.py").read_text()
NO_PWSH = "pwsh is not installed (no registry of this machine has PowerShell): the bridge's PowerShell side is untested"
USE_STAND_IN = ["  - mkdir -p bin sub && cp pwsh.py bin/pwsh && chmod +x bin/pwsh", '  - export PATH="$PWD/bin:$PATH"']


class Ran(NamedTuple):
    """A job's result, what its scripts printed (its log without the echoed commands), and its whole log."""

    status: str
    printed: list[str]
    log: str


def run(make_project: Any, *yml: str, stand_in: bool = True) -> Ran:
    """Build a repository of ``appveyor.yml`` lines and a ``sub`` folder (with the stand-in pwsh unless
    ``stand_in`` is off); its one job as it ran."""
    files = {"appveyor.yml": appveyor_yml(*yml), "sub/keep.txt": "x\n", **({"pwsh.py": STAND_IN} if stand_in else {})}
    project = make_project(files)
    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])
    return Ran(build["status"], output(log), log)


def test_bash_and_powershell_exchange_variables_and_the_folder_both_ways_in_one_powershell_session(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    ran = run(
        make_project,
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

    assert ran.status == "success", ran.log
    assert any(re.fullmatch(r"ps sees b1 in /.*/build", line) for line in ran.printed), ran.log
    assert any(re.fullmatch(r"bash sees p1 unset in /.*/build/sub", line) for line in ran.printed), ran.log
    assert any(re.fullmatch(r"ps sees b2 p1 in /.*/build", line) for line in ran.printed), ran.log
    sessions = [line.split()[2] for line in ran.printed if line.startswith("stand-in pwsh ")]
    assert len(sessions) == 3 and len(set(sessions)) == 1, ran.log  # three scripts, one PowerShell process


def test_exit_in_powershell_ends_its_session_and_its_code_fails_the_job(make_project) -> None:  # type: ignore[no-untyped-def]
    passed = run(make_project, "install:", *USE_STAND_IN, "build_script:", "  - ps: exit 0", "  - ps: echo next")
    failed = run(make_project, "install:", *USE_STAND_IN, "build_script:", "  - ps: exit 3", "  - echo never printed")

    assert passed.status == "success", passed.log
    assert "PowerShell exited with code 0; the next PowerShell script starts a new session." in passed.printed
    assert "next" in passed.printed
    sessions = [line.split()[2] for line in passed.printed if line.startswith("stand-in pwsh ")]
    assert len(set(sessions)) == 2, passed.log  # the script after exit ran in a new session
    assert failed.status == "failed", failed.log
    assert "PowerShell exited with code 3; the next PowerShell script starts a new session." in failed.printed
    assert "Command exited with code 3 in build_script: ps: exit 3" in failed.printed
    assert "never printed" not in failed.printed


def test_a_powershell_script_that_throws_fails_the_job_gracefully(make_project) -> None:  # type: ignore[no-untyped-def]
    ran = run(
        make_project, "install:", *USE_STAND_IN, "build_script:", "  - ps: throw boom", "on_failure:", "  - echo ok"
    )

    assert ran.status == "failed", ran.log
    assert "Command executed with exception: boom" in ran.printed
    assert "ok" in ran.printed  # on_failure ran: a throw fails the job as a failing command does


@pytest.mark.skipif(shutil.which("pwsh") is None, reason=NO_PWSH)
def test_real_powershell_shares_variables_folder_and_its_own_session_with_bash(make_project) -> None:  # type: ignore[no-untyped-def]
    ran = run(
        make_project,
        "install:",
        "  - export FROM_BASH=b1",
        "build_script:",
        '  - ps: Write-Host "ps sees $env:FROM_BASH"; $kept = "k1"; function Greet($who) { "hi-$who" }',
        "  - ps: $env:FROM_PS = 'p1'; Set-Location sub",
        '  - echo "bash sees $FROM_PS in $PWD"',
        '  - ps: Write-Host "kept $kept"; Greet x',
        stand_in=False,
    )

    assert ran.status == "success", ran.log
    assert "ps sees b1" in ran.printed
    assert any(re.fullmatch(r"bash sees p1 in /.*/build/sub", line) for line in ran.printed), ran.log
    assert "kept k1" in ran.printed and "hi-x" in ran.printed


@pytest.mark.skipif(shutil.which("pwsh") is None, reason=NO_PWSH)
def test_real_powershell_throw_fails_and_a_native_exit_code_does_not(make_project) -> None:  # type: ignore[no-untyped-def]
    ran = run(
        make_project,
        "build_script:",
        "  - ps: bash -c 'exit 4'; Write-Host \"native code $LASTEXITCODE\"",
        "  - ps: Set-AppveyorBuildVariable -Name FROM_CMDLET -Value c1",
        '  - echo "bash sees $FROM_CMDLET"',
        "  - ps: throw 'boom'",
        stand_in=False,
    )

    assert ran.status == "failed", ran.log
    assert "native code 4" in ran.printed and "bash sees c1" in ran.printed
    assert "Command executed with exception: boom" in ran.printed
