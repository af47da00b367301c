"""A Windows build agent's runner: its environment, its command, the Job Object it runs in, the appveyor launcher."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

from chalicelib.runner.windows.host import runner_command, runner_environment
from chalicelib.runner.windows.jobobject import _BasicLimits, _ExtendedLimits
from chalicelib.runner.windows.launcher import launcher_text, write_launcher


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


def test_the_appveyor_command_is_a_cmd_that_runs_its_script_with_the_runners_python(tmp_path: Path) -> None:
    write_launcher(tmp_path, "C:\\Python313\\python.exe", "print('appveyor')\n")

    assert (tmp_path / "appveyor.cmd").read_bytes() == b'@"C:\\Python313\\python.exe" -I "%~dp0appveyor.py" %*\r\n'
    assert (tmp_path / "appveyor.py").read_text() == "print('appveyor')\n"
    assert launcher_text("python.exe").endswith("%*\r\n")  # every argument passed on
