"""A Windows build agent's runner: its environment, its command, the Job Object it runs in, the appveyor launcher."""

from __future__ import annotations

import ctypes
import io
import sys
import zipfile
from pathlib import Path

import pytest

from chalicelib.runner.windows import launcher
from chalicelib.runner.windows.host import runner_command, runner_environment
from chalicelib.runner.windows.jobobject import _BasicLimits, _ExtendedLimits
from chalicelib.runner.windows.launcher import write_launcher


def test_the_runner_gets_the_machines_environment_without_the_agents_key_or_settings() -> None:
    machine = {"Path": "C:\\Windows", "CONVEYOR_AGENT_KEY": "cvya_key", "conveyor_other": "x", "USERNAME": "ci"}

    environment = runner_environment(machine, Path("C:/jobs/job-7"), "C:\\projects")

    assert environment == {
        "Path": "C:\\Windows",
        "USERNAME": "ci",
        "CONVEYOR_WORKSPACE": str(Path("C:/jobs/job-7")),
        "CONVEYOR_PROJECTS_ROOT": "C:\\projects",
    }
    assert "cvya_key" not in environment.values()


def test_the_runner_is_this_python_isolated_from_the_machines_python_variables() -> None:
    assert runner_command() == [sys.executable, "-I", "-m", "chalicelib.runner"]


def test_the_job_object_limits_have_windows_x64_layout() -> None:
    # JOBOBJECT_BASIC_LIMIT_INFORMATION and JOBOBJECT_EXTENDED_LIMIT_INFORMATION on 64-bit Windows (winnt.h)
    assert (ctypes.sizeof(_BasicLimits), ctypes.sizeof(_ExtendedLimits)) == (64, 144)
    assert _BasicLimits.LimitFlags.offset == 16 and _ExtendedLimits.ProcessMemoryLimit.offset == 112


def test_the_appveyor_command_is_pips_launcher_starting_the_runners_python_on_the_command(tmp_path: Path) -> None:
    command = write_launcher(tmp_path, "C:\\Program Files\\Python313\\python.exe", "print('appveyor')\n")

    data = command.read_bytes()
    assert command.name == "appveyor.exe" and data.startswith(b"MZ")  # pip's t64.exe, from this venv's pip
    assert b'#!"C:\\Program Files\\Python313\\python.exe" -I\r\n' in data
    assert zipfile.ZipFile(io.BytesIO(data)).read("__main__.py") == b"print('appveyor')\n"


def test_without_pip_the_appveyor_command_is_a_cmd_passing_every_argument_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "launcher_template", lambda: None)

    command = write_launcher(tmp_path, "C:\\Python313\\python.exe", "print('appveyor')\n")

    assert command.read_bytes() == b'@"C:\\Python313\\python.exe" -I "%~dp0appveyor.py" %*\r\n'
    assert (tmp_path / "appveyor.py").read_text() == "print('appveyor')\n"
