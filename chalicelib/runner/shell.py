"""Running one program in its own process group, output line by line, stoppable: a build agent's deploy_script.
A build's scripts run in the job's one shell (runner/session.py), and its PowerShell beside it (powershell.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_LINE_BYTES = 64 * 1024
_POLL_SECONDS = 0.2
_READ_SECONDS = 5.0
_STOPPED_READ_SECONDS = 0.5


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None  # None when the script was stopped or could not start
    stopped: str | None = None  # why it was stopped: the stop reason, or the start failure
    ended_shell: bool = False  # the command ended the job's shell (``exit N``): exit_code is the shell's

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0 and not self.ended_shell


def in_session(script: Mapping[str, Any]) -> bool:
    """Whether a configured script runs in the job's Bash session (runner/session.py): plain lines (language
    ``cmd`` in AppVeyor's JSON) and ``sh:`` lines; an explicit ``cmd:`` line (``windowsOnly``) is for Windows."""
    return str(script.get("language") or "cmd") in ("cmd", "sh") and not script.get("windowsOnly")


def run(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    on_line: Callable[[str], None],
    should_stop: Callable[[], str | None],
) -> Outcome:
    """Run ``argv``, passing each output line (stdout and stderr, in order) to ``on_line``.

    ``should_stop`` is asked a few times a second; when it returns a reason, the script's whole
    process group is killed. Whatever it left behind in the group is killed when it ends too.
    """
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        return Outcome(None, f"The script could not start: {error.strerror}.")
    assert process.stdout is not None
    reader = threading.Thread(target=_pump_lines, args=(process.stdout, on_line), daemon=True)
    reader.start()
    stopped = wait_or_stop(process, should_stop, lambda: _kill_group(process.pid), _POLL_SECONDS)
    _kill_group(process.pid)  # background children must not outlive their script
    # what the script printed is read to its end; a process that left the group (setsid) may hold the pipe open
    # until the sandbox ends, and a stopped job does not wait for it
    reader.join(timeout=_STOPPED_READ_SECONDS if stopped else _READ_SECONDS)
    return Outcome(None, stopped) if stopped else Outcome(process.returncode)


def wait_or_stop(
    process: subprocess.Popen[bytes], should_stop: Callable[[], str | None], stop: Callable[[], None], poll: float
) -> str | None:
    """Wait for ``process`` to end, asking ``should_stop`` every ``poll`` seconds; when it gives a reason, ``stop``
    ends the process (and what it started), and the reason is returned."""
    while process.poll() is None:
        stopped = should_stop()
        if stopped:
            stop()
            process.wait()
            return stopped
        with contextlib.suppress(subprocess.TimeoutExpired):  # returns as soon as the process ends
            process.wait(timeout=poll)
    return None


def _pump_lines(stream: Any, on_line: Callable[[str], None]) -> None:
    with stream:
        while True:
            raw = stream.readline(MAX_LINE_BYTES)
            if not raw:
                return
            on_line(raw.decode("utf-8", errors="replace").rstrip("\r\n"))


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
