"""The batch file each cmd line runs in, and reading back the environment it leaves (the session itself runs under
Wine: tests/functional/test_windows_agent_under_wine.py)."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.windows.cmd_session import WindowsSession, parse_environment, wrapper_text


def test_the_line_runs_below_a_label_the_wrapper_calls_then_its_state_and_status_are_written() -> None:
    text = wrapper_text("vcvarsall.bat amd64", Path("e"), Path("c"), Path("s"))
    lines = text.split("\r\n")

    assert lines[:2] == ["@echo off", "call :conveyor_line"]
    assert lines.index(":conveyor_line") < lines.index("vcvarsall.bat amd64")  # a .cmd started there returns
    assert lines[2:6] == [
        "set __CONVEYOR_STATUS=%ERRORLEVEL%",
        'set > "e"',
        'cd > "c"',
        '> "s" echo %__CONVEYOR_STATUS%',
    ]


def test_the_listing_of_set_becomes_the_next_lines_environment_without_the_wrappers_status() -> None:
    listed = "ComSpec=C:\\Windows\\system32\\cmd.exe\r\nGREETING=a=b\r\n__CONVEYOR_STATUS=0\r\nPath=C:\\bin\r\n"

    assert parse_environment(listed) == {
        "ComSpec": "C:\\Windows\\system32\\cmd.exe",
        "GREETING": "a=b",
        "Path": "C:\\bin",
    }


def test_a_variable_the_job_sets_reaches_the_next_command_once_and_a_line_may_change_it_after(tmp_path: Path) -> None:
    session = WindowsSession(tmp_path, print, tmp_path / "commands")
    (tmp_path / "env.out").write_text("NAME=from a line\r\n")
    (tmp_path / "cwd.out").write_text("C:\\projects\\app\\sub\r\n")

    assert session.apply({"NAME": "first"}) == {"NAME": "first"}
    assert session.take(tmp_path / "env.out", tmp_path / "cwd.out")
    assert session.apply({"NAME": "first"}) == {"NAME": "from a line"}  # unchanged by the job: the line's stands
    assert session.apply({"NAME": "set again"}) == {"NAME": "set again"}  # appveyor SetVariable
    assert session.cwd == "C:\\projects\\app\\sub"
