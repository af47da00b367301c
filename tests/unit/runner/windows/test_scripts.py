"""Which interpreter a configured script runs in on a Windows build agent."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.shell import Outcome
from chalicelib.runner.windows.cmd_session import WindowsSession
from chalicelib.runner.windows.scripts import run_script


def test_sh_lines_are_skipped_on_windows_saying_so(tmp_path: Path) -> None:
    said: list[str] = []
    session = WindowsSession(tmp_path, said.append, tmp_path / "commands")

    outcome = run_script(session, {"language": "sh", "script": "rm -rf /"}, {}, lambda: None, tmp_path)

    assert outcome == Outcome(0)
    assert said == ["Skipped on Windows: an 'sh:' script runs on Linux images only (plain lines and 'cmd:' run here)."]


def test_a_language_windows_does_not_run_fails_the_script(tmp_path: Path) -> None:
    session = WindowsSession(tmp_path, print, tmp_path / "commands")

    outcome = run_script(session, {"language": "node", "script": "x"}, {}, lambda: None, tmp_path)

    assert outcome == Outcome(None, "Scripts in 'node' cannot run on this runner.")
