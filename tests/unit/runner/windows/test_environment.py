"""What a job's scripts see on a Windows build agent."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.windows.environment import script_environment

MACHINE = {
    "Path": "C:\\Windows\\system32;C:\\Python311",
    "SystemRoot": "C:\\Windows",
    "CONVEYOR_AGENT_KEY": "cvya_secret",
    "Conveyor_Workspace": "C:\\jobs\\1",
    "TEMP": "C:\\Users\\agent\\AppData\\Local\\Temp",
}
JOB = {"CI": "true", "CI_LINUX": "true", "CI_WINDOWS": "false", "path": "C:\\tools", "PLATFORM": "x64"}


def environment() -> dict[str, str]:
    return script_environment(
        MACHINE, JOB, Path("C:/projects/app"), Path("C:/jobs/1/temp"), "http://localhost:1/s/", Path("C:/jobs/1/bin")
    )


def test_scripts_see_appveyors_windows_values_over_the_jobs_linux_ones() -> None:
    seen = environment()

    assert {name: seen[name] for name in ("CI", "APPVEYOR", "CI_WINDOWS", "CI_LINUX", "PLATFORM")} == {
        "CI": "True",
        "APPVEYOR": "True",
        "CI_WINDOWS": "true",
        "CI_LINUX": "false",
        "PLATFORM": "x64",
    }
    assert seen["APPVEYOR_BUILD_FOLDER"] == str(Path("C:/projects/app"))
    assert seen["TEMP"] == seen["TMP"] == str(Path("C:/jobs/1/temp"))


def test_the_agents_own_settings_and_key_never_reach_a_script() -> None:
    seen = environment()

    assert not [name for name in seen if name.upper().startswith("CONVEYOR")]
    assert "cvya_secret" not in seen.values()


def test_names_are_one_variable_whatever_their_case_so_path_is_never_doubled() -> None:
    seen = environment()

    assert [name for name in seen if name.upper() == "PATH"] == ["path"]
    assert seen["path"] == "C:\\tools"  # the job's value, as the job spelled it
    assert seen["SystemRoot"] == "C:\\Windows"
