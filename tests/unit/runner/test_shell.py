"""One program in its own process group (a build agent's deploy_script): its output line by line, its exit code,
and a stop that kills it. Runs sh in a temporary folder."""

from __future__ import annotations

import os
import time
from pathlib import Path

from chalicelib.runner.shell import in_session, run

ENVIRONMENT = {"PATH": os.environ["PATH"], "TARGET": "staging"}


def test_each_output_line_stdout_and_stderr_is_passed_on_in_order_with_the_exit_code(tmp_path: Path) -> None:
    lines: list[str] = []

    outcome = run(
        ["sh", "-c", 'echo "to $TARGET"; echo oops >&2; exit 4'], tmp_path, ENVIRONMENT, lines.append, lambda: None
    )

    assert lines == ["to staging", "oops"]
    assert (outcome.exit_code, outcome.succeeded) == (4, False)


def test_a_stop_kills_the_program_and_what_it_started(tmp_path: Path) -> None:
    started = time.monotonic()

    outcome = run(["sh", "-c", "sleep 30 & sleep 30"], tmp_path, ENVIRONMENT, lambda line: None, lambda: "cancelled")

    assert (outcome.exit_code, outcome.stopped) == (None, "cancelled")
    assert time.monotonic() - started < 10


def test_a_program_that_cannot_start_says_so(tmp_path: Path) -> None:
    outcome = run([str(tmp_path / "missing")], tmp_path, ENVIRONMENT, lambda line: None, lambda: None)

    assert outcome.exit_code is None and outcome.stopped is not None
    assert outcome.stopped.startswith("The script could not start: ")


def test_plain_and_sh_lines_run_in_the_bash_session_and_windows_lines_do_not() -> None:
    assert in_session({"script": "make"}) and in_session({"language": "sh", "script": "make"})
    assert not in_session({"language": "cmd", "script": "dir", "windowsOnly": True})
    assert not in_session({"language": "ps", "script": "Get-Item ."})
