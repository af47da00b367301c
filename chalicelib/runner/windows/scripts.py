"""A configured script on Windows: plain and ``cmd:`` lines in cmd.exe, ``ps:`` and ``pwsh:`` blocks in PowerShell,
``sh:`` lines skipped (they are for Linux images), as AppVeyor runs them on its Windows images."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chalicelib.runner.shell import Outcome
from chalicelib.runner.windows import powershell
from chalicelib.runner.windows.cmd_session import WindowsSession


def run_script(
    session: WindowsSession,
    script: Mapping[str, Any],
    variables: Mapping[str, str],
    should_stop: Callable[[], str | None],
    work: Path,
) -> Outcome:
    """Run one script of the job's configuration in the job's Windows session (``work``: the runner's folder)."""
    language, text = str(script.get("language") or "cmd"), str(script.get("script") or "")
    if language == "cmd":
        return session.run(text, variables, should_stop)
    if language == "sh":
        session.say("Skipped on Windows: an 'sh:' script runs on Linux images only (plain lines and 'cmd:' run here).")
        return Outcome(0)
    if language in ("ps", "pwsh"):
        return powershell.run_block(session, text, language, variables, should_stop, work / "powershell")
    return Outcome(None, f"Scripts in '{language}' cannot run on this runner.")
