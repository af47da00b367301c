"""A job's Bash session: one shell from its first script to its last, so what one command sets the next one sees;
``exit N`` ends it. Runs bash in a temporary folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from chalicelib.runner.session import Session
from chalicelib.runner.shell import Outcome

VARIABLES = {"PATH": os.environ["PATH"], "GREETING": "hello"}


def never() -> str | None:
    return None


def in_one_session(
    folder: Path, commands: list[str], should_stop: Callable[[], str | None] = never
) -> tuple[list[Outcome], list[str]]:
    """Each command's outcome, run one after the other in one session, and the lines they printed."""
    lines: list[str] = []
    session = Session(folder, lines.append)
    try:
        return [session.run(command, VARIABLES, should_stop) for command in commands], lines
    finally:
        session.close()


def test_what_a_command_sets_the_next_command_sees_with_the_jobs_variables(tmp_path: Path) -> None:
    commands = ["mkdir sub && cd sub; NAME=world", 'echo "$GREETING $NAME from $(basename "$PWD")"', "false"]

    (first, second, failed), lines = in_one_session(tmp_path, commands)

    assert (first.exit_code, second.exit_code, failed.exit_code) == (0, 0, 1)
    assert "hello world from sub" in lines
    assert not failed.ended_shell  # a failing command leaves the shell for the next one


def test_exit_ends_the_shell_and_nothing_runs_after_it(tmp_path: Path) -> None:
    (ended, after), lines = in_one_session(tmp_path, ["exit 3", "echo never"])

    assert (ended.exit_code, ended.ended_shell, ended.succeeded) == (3, True, False)
    assert after.exit_code is None and after.stopped == "The job's shell has ended."
    assert "never" not in lines


def test_a_stop_kills_the_running_command(tmp_path: Path) -> None:
    (stopped,), _ = in_one_session(tmp_path, ["sleep 30"], lambda: "cancelled")

    assert (stopped.exit_code, stopped.stopped) == (None, "cancelled")


def test_bash_errors_name_the_users_command_not_a_line_of_the_session(tmp_path: Path) -> None:
    commands = ["not-a-command-here", "cd /no/such/folder", "if then", "echo done"]

    _, lines = in_one_session(tmp_path, commands)

    assert "bash: not-a-command-here: command not found" in lines, lines
    assert "bash: cd: /no/such/folder: No such file or directory" in lines, lines
    assert "bash: syntax error near unexpected token `then'" in lines, lines
    assert [line for line in lines if " line " in line] == [], lines  # the session's line numbers are Conveyor's
