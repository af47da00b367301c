"""A job's Bash session: one shell from its first script to its last, so what one command sets the next one sees;
``exit N`` ends it. Runs bash in a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

from chalicelib.runner.session import Session

VARIABLES = {"PATH": os.environ["PATH"], "GREETING": "hello"}


def never() -> str | None:
    return None


def test_what_a_command_sets_the_next_command_sees_with_the_jobs_variables(tmp_path: Path) -> None:
    lines: list[str] = []
    session = Session(tmp_path, lines.append)
    try:
        first = session.run("cd sub 2>/dev/null || mkdir sub && cd sub; NAME=world", VARIABLES, never)
        second = session.run('echo "$GREETING $NAME from $(basename "$PWD")"', VARIABLES, never)
        failed = session.run("false", VARIABLES, never)
    finally:
        session.close()

    assert (first.exit_code, second.exit_code, failed.exit_code) == (0, 0, 1)
    assert "hello world from sub" in lines
    assert not failed.ended_shell  # a failing command leaves the shell for the next one


def test_exit_ends_the_shell_and_nothing_runs_after_it(tmp_path: Path) -> None:
    lines: list[str] = []
    session = Session(tmp_path, lines.append)
    try:
        ended = session.run("exit 3", VARIABLES, never)
        after = session.run("echo never", VARIABLES, never)
    finally:
        session.close()

    assert (ended.exit_code, ended.ended_shell, ended.succeeded) == (3, True, False)
    assert after.exit_code is None and after.stopped == "The job's shell has ended."
    assert "never" not in lines


def test_a_stop_kills_the_running_command(tmp_path: Path) -> None:
    session = Session(tmp_path, lambda line: None)
    try:
        stopped = session.run("sleep 30", VARIABLES, lambda: "cancelled")
    finally:
        session.close()

    assert (stopped.exit_code, stopped.stopped) == (None, "cancelled")
