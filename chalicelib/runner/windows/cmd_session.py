"""The job's cmd.exe lines, as AppVeyor runs them on Windows: one line at a time, each in ``cmd.exe`` with the
environment and current folder the last line (or PowerShell block) left, so ``set``, ``cd`` and ``call
vcvarsall.bat`` hold for the next line and phase.

Each line is written into a wrapper batch file, below a label the wrapper ``call``s (a ``.cmd`` the line starts
without ``call``, an ``appveyor.cmd`` among them, returns to the wrapper); the wrapper then keeps the line's
``ERRORLEVEL``, writes ``set``, ``cd`` and that status to files, and exits. The runner reads them back: the status
is the line's result, and the environment and folder are the next line's. (The status is read from a file, not from
cmd.exe's exit code, which ``CALL`` loses under Wine.) A line that ends cmd.exe itself (``exit 3``) leaves no
status: cmd.exe's exit code is its result, and the environment stays as it was. Every line runs in the job's one Job
Object: what a line starts in the background (``start /B mongod``) lives on into the next lines, as on AppVeyor, and
a stop, or the job's end, ends them all.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from chalicelib.runner.shell import MAX_LINE_BYTES, Outcome, wait_or_stop
from chalicelib.runner.windows import console

if TYPE_CHECKING:
    from chalicelib.runner.windows.jobobject import JobObject

_POLL_SECONDS = 0.1
_READ_SECONDS = 5.0
_STATUS = "__CONVEYOR_STATUS"


class WindowsSession:
    """The environment and current folder a job's cmd lines and PowerShell blocks hand on, one to the next."""

    def __init__(self, cwd: Path, on_line: Callable[[str], None], folder: Path) -> None:
        self.cwd, self.say, self._folder = str(cwd), on_line, folder
        self.environment: dict[str, str] = {}
        self._sent: dict[str, str] = {}  # the job's variables as last applied: only what changes is applied again
        self._job: JobObject | None = None
        self.ended = False

    @property
    def job(self) -> JobObject:
        """The Job Object the job's commands run in, made at the first."""
        if self._job is None:
            from chalicelib.runner.windows.jobobject import JobObject

            self._job = JobObject()
        return self._job

    def apply(self, variables: Mapping[str, str]) -> dict[str, str]:
        """The environment for the next command: the session's, with the job's variables that changed since the
        last command (``appveyor SetVariable``) applied."""
        changed = [(name, value) for name, value in variables.items() if self._sent.get(name) != value]
        self._sent.update(changed)
        self.environment = console.merged(self.environment, changed)
        return self.environment

    def run(self, text: str, variables: Mapping[str, str], should_stop: Callable[[], str | None]) -> Outcome:
        """Run each line of ``text`` in cmd.exe, in order, the first that fails ending the script."""
        outcome = Outcome(0)
        for line in text.splitlines() or [""]:
            if not line.strip():
                continue
            outcome = self.run_line(line, variables, should_stop)
            if not outcome.succeeded:
                return outcome
        return outcome

    def run_line(self, line: str, variables: Mapping[str, str], should_stop: Callable[[], str | None]) -> Outcome:
        """Run one line in cmd.exe; its ``ERRORLEVEL``, or why it was stopped."""
        self._folder.mkdir(parents=True, exist_ok=True)
        wrapper = self._folder / "line.cmd"
        environment_file, folder_file, status_file = (self._folder / name for name in ("env.out", "cwd.out", "status"))
        for stale in (environment_file, folder_file, status_file):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        wrapper.write_bytes(_encoded(wrapper_text(line, environment_file, folder_file, status_file)))
        shell = console.variable(self.environment, "COMSPEC", "cmd.exe")
        command = f'"{shell}" /D /E:ON /V:OFF /S /C "CALL "{wrapper}""'
        if self.ended:
            return Outcome(None, "The job's commands have ended.")
        outcome = run_in_job(self.job, command, self.cwd, self.apply(variables), self.say, should_stop)
        if outcome.exit_code is None:
            return outcome
        try:
            status = int(status_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return outcome  # the line ended cmd.exe (exit N): its exit code stands, and so does the environment
        self.take(environment_file, folder_file)
        return Outcome(status)

    def take(self, environment_file: Path, folder_file: Path) -> bool:
        """Take the environment and folder a command wrote (``NAME=VALUE`` lines, a path); whether it wrote them."""
        try:
            dumped, folder = environment_file.read_bytes(), folder_file.read_bytes()
        except FileNotFoundError:
            return False
        self.environment = parse_environment(console.decode(dumped))
        where = console.decode(folder).strip()
        if where:
            self.cwd = where
        return True

    def close(self, read_seconds: float = 0) -> None:
        """End everything the job's commands left running."""
        self.ended = True
        if self._job is not None:
            self._job.terminate()
            self._job.close()


def wrapper_text(line: str, environment_file: Path, folder_file: Path, status_file: Path) -> str:
    """The batch file that runs a line and writes what it left: the environment, the folder, then its
    ``ERRORLEVEL``."""
    return "\r\n".join(
        [
            "@echo off",
            "call :conveyor_line",
            f"set {_STATUS}=%ERRORLEVEL%",
            f'set > "{environment_file}"',
            f'cd > "{folder_file}"',
            f'> "{status_file}" echo %{_STATUS}%',
            f"exit /b %{_STATUS}%",
            ":conveyor_line",
            line,
            "",
        ]
    )


def parse_environment(text: str) -> dict[str, str]:
    """``set``'s listing as variables (a value spanning lines keeps its first, as on AppVeyor)."""
    variables: dict[str, str] = {}
    for line in text.splitlines():
        name, equals, value = line.partition("=")
        if equals and name and name.upper() != _STATUS:
            variables[name] = value
    return variables


def run_in_job(
    job: JobObject,
    command: str | list[str],
    cwd: str,
    environment: Mapping[str, str],
    on_line: Callable[[str], None],
    should_stop: Callable[[], str | None],
) -> Outcome:
    """Run a command in ``job``, its output line by line to ``on_line``; a stop ends the job's whole tree."""
    try:
        process = job.start(
            command,
            cwd=cwd,
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    except OSError as error:
        return Outcome(None, f"The command could not start: {error.strerror or error}.")
    assert process.stdout is not None
    reader = threading.Thread(target=_pump, args=(process.stdout, on_line), name="cmd", daemon=True)
    reader.start()
    stopped = wait_or_stop(process, should_stop, job.terminate, _POLL_SECONDS)
    # a background process the command started may hold its output open: it is read while it comes, not waited for
    reader.join(timeout=0.5 if stopped else _READ_SECONDS)
    return Outcome(None, stopped) if stopped else Outcome(process.returncode)


def _pump(stream: IO[bytes], on_line: Callable[[str], None]) -> None:
    with stream:
        while raw := stream.readline(MAX_LINE_BYTES):
            on_line(console.decode(raw).rstrip("\r\n"))


def _encoded(text: str) -> bytes:
    """A batch file's bytes: cmd.exe reads them in the OEM code page (no console: no other); text that page cannot
    hold is written in UTF-8 (a ``chcp 65001`` line before it reads it so)."""
    try:
        return text.encode(console.oem_encoding())
    except UnicodeEncodeError:
        return text.encode("utf-8")
