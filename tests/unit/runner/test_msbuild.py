"""The build phase in MSBuild mode, appveyor.yml's default: a Linux runner skips it saying so; a Windows build agent
with no MSBuild anywhere fails the job saying what to do (AppVeyor would have built). MSBuild itself running is
tested under Wine (tests/functional/test_windows_msbuild_under_wine.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chalicelib.protocol.job_spec import read_spec
from chalicelib.runner.msbuild import SKIPPED_ON_LINUX, run_msbuild
from chalicelib.runner.scripts import JobFailed
from chalicelib.runner.windows.cmd_session import WindowsSession
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
