"""The build phase in MSBuild mode, appveyor.yml's default: a Linux runner skips it saying so; a Windows build agent
with no MSBuild anywhere fails the job saying what to do (AppVeyor would have built). MSBuild itself running is
tested under Wine (tests/functional/test_windows_msbuild_under_wine.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chalicelib.protocol.job_spec import read_spec
from chalicelib.runner import msbuild as msbuild_mode
from chalicelib.runner.msbuild import SKIPPED_ON_LINUX, run_msbuild
from chalicelib.runner.run import Run
from chalicelib.runner.scripts import JobFailed
from chalicelib.runner.shell import Outcome
from chalicelib.runner.windows.cmd_session import WindowsSession
from chalicelib.runner.windows.msbuild import MSBuild
from tests.unit.runner.runs import Log, new_run

SPEC = read_spec({"source": {}, "configuration": {"buildMode": "msbuild", "msBuildProjectFileName": "App.sln"}})


def test_a_linux_runner_skips_msbuild_saying_so(tmp_path: Path) -> None:
    log = Log()
    run = new_run(tmp_path, log, SPEC)

    run_msbuild(run)
    run.log.close()

    assert log.lines() == [SKIPPED_ON_LINUX]


def test_a_windows_agent_with_no_msbuild_anywhere_fails_the_build_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ProgramFiles(x86)", raising=False)
    monkeypatch.delenv("ProgramFiles", raising=False)
    log = Log()
    run = new_run(tmp_path, log, SPEC)
    run.variables["PATH"] = r"C:\Windows\system32;C:\Windows"
    run.windows = WindowsSession(tmp_path, run.say, tmp_path / "commands")

    with pytest.raises(JobFailed) as failed:
        run_msbuild(run)
    run.log.close()

    assert failed.value.phase == "build"
    assert "MSBuild was not found on this build agent" in str(failed.value)
    assert "Visual Studio or its Build Tools" in str(failed.value) and "build_script" in str(failed.value)
    assert log.lines() == [str(failed.value)]


def msbuild_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str) -> tuple[Run, Log, list[str]]:
    """A Windows agent's run whose CONFIGURATION is the secure variable ``secret`` (masked in its log), MSBuild found,
    and the cmd lines it runs noted instead of run (there is no cmd.exe here)."""
    monkeypatch.setattr(msbuild_mode, "find", lambda environment, machine: MSBuild(("msbuild.exe",), "here"))
    ran: list[str] = []
    monkeypatch.setattr(WindowsSession, "run_line", lambda session, line, *_: ran.append(line) or Outcome(0))
    log = Log()
    run = new_run(tmp_path, log, {**SPEC, "secrets": [secret]})
    run.log.add_secrets(secret)  # as the runner's log masks the spec's secrets
    run.variables["CONFIGURATION"] = secret
    run.windows = WindowsSession(tmp_path, run.say, tmp_path / "commands")
    return run, log, ran


def test_a_secure_configuration_holding_a_percent_sign_stays_masked_on_msbuilds_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line doubles % for the batch file it runs in: the log echoed p%%ss, which the mask of p%ss missed."""
    run, log, ran = msbuild_run(tmp_path, monkeypatch, "Release p%ss")

    run_msbuild(run)
    run.log.close()

    assert ran == ['msbuild.exe App.sln /p:Configuration="Release p%%ss" /verbosity:minimal']
    assert not any("p%%ss" in line or "p%ss" in line for line in log.lines()), log.lines()
    assert '$ msbuild.exe App.sln /p:Configuration="[secure]" /verbosity:minimal' in log.lines()


def test_a_secure_configuration_no_quoting_holds_is_refused_without_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal quoted the value as Python's repr writes it (its backslashes doubled), which the mask missed."""
    secret = 'C:\\keys\\"the secret'
    run, log, ran = msbuild_run(tmp_path, monkeypatch, secret)

    with pytest.raises(JobFailed) as failed:
        run_msbuild(run)
    run.log.close()

    assert ran == []
    assert "CONFIGURATION" in str(failed.value) and "double quote" in str(failed.value)
    assert not any("the secret" in text for text in [str(failed.value), *log.lines()]), log.lines()
