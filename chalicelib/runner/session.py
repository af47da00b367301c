"""The job's shell: one Bash process from its first script to its last, as AppVeyor's Linux images run them.

Variables, functions, shell options and the current folder one command sets are there for the next. Each command
reaches the shell on a pipe it reads as its script (bash reads it on a descriptor closed on exec, so no command's
children hold it) as ``eval '<command>'``, then a line that prints a marker of this job and ``$?`` on a descriptor
of its own, a copy of the output pipe. Output and marker travel one pipe in order: once the marker is read,
everything the command printed is logged. The marker starts a line of its own, so output without a trailing newline
is logged too. A shell that ends (``exit N``) is how a command ends the job at once.

The shell leads its own process group: a stop, or the job's end, kills the group, commands and children alike.
Background processes a command starts live on into the next commands, as on AppVeyor, until then.

Before the first command, the shell sources the image's profile where it has one (nvm and the tools' settings of
Conveyor's image). In a job's container (runner/container.py) the shell is the container's: its first process
starts it and passes it what the session writes; it says ``<marker>-ended <code>`` when the shell ends. Closing the
commands ends the container, and the kernel kills everything in it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from chalicelib.runner.container import JobContainer
from chalicelib.runner.shell import MAX_LINE_BYTES, Outcome

_POLL_SECONDS = 0.2  # how often a stop is looked for; a command's end is noticed at once
_READ_SECONDS = 5.0
_STOPPED_READ_SECONDS = 0.5
_STATUS_FD = 63  # where the shell prints the marker: a command that redirects its output leaves it alone
_SET_X = shlex.quote("{ set -x; } 2>/dev/null\n")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Bash's own messages name the session's script (bash, or /dev/fd/N beside the runner) and the line of it a command
# was given on ("bash: line 37: node: command not found"): Conveyor's, not the user's. The log has them as "bash:
# node: command not found".
_SESSION_LINE = re.compile(r"(?:bash|/dev/fd/\d+): (?:eval: )?line \d+: ")
# The image's profile (images/ubuntu/session.sh): nvm, the default Node.js, JAVA_HOME, what `stack:` calls. Sourced
# once, after the job's variables are first exported, as a login shell would read it; an image without it (the
# sandbox's, a container image of the build's choosing) has none.
_PROFILE = "/etc/conveyor/session.sh"
_SOURCE_PROFILE = f"[ -r {_PROFILE} ] && . {_PROFILE}"


class Session:
    """A job's shell, started at its first command and killed by ``close``."""

    def __init__(self, cwd: Path, on_line: Callable[[str], None], container: JobContainer | None = None) -> None:
        self._cwd, self._on_line, self._container = cwd, on_line, container
        self._container_exit: int | None = None  # the container's shell's exit code, once it has said it ended
        self._started = False
        self._profiled = False  # whether the image's profile was sourced
        self._marker = f"conveyor-status-{secrets.token_hex(16)}"
        self._statuses: queue.Queue[int] = queue.Queue()
        self._process: subprocess.Popen[bytes] | None = None
        self._commands: int | None = None  # the write end of the pipe the shell reads its commands from
        self._pump: threading.Thread | None = None
        self._sent: dict[str, str] = {}  # the variables the shell was given, to give it only what changes
        self._setups: set[str] = set()
        self.ended = False

    def run(
        self, text: str, variables: Mapping[str, str], should_stop: Callable[[], str | None], setup: str = ""
    ) -> Outcome:
        """Run ``text`` in the shell, its output line by line to ``on_line``; ``ended_shell`` when it ended it.

        ``variables`` are the job's (``appveyor SetVariable`` changes them): the shell gets those that changed since
        the last command. ``should_stop`` is asked a few times a second; a reason kills the shell's process group.
        ``setup`` (definitions the command needs, untraced) is given to the shell once, before the first command
        that needs it.
        """
        if self.ended:
            return Outcome(None, "The job's shell has ended.")
        if not self._started:
            self._started = True
            failure = self._start_in_container() if self._container else self._start(variables)
            if failure:
                return Outcome(None, failure)
        # with xtrace on (set -x), the shell's own lines would be traced: it is off while they run, and the
        # command's eval turns it back on first, silently
        lines = [*self._exports(variables)]
        if not self._profiled:
            self._profiled = True
            lines.append(_SOURCE_PROFILE)
        if setup and setup not in self._setups:
            self._setups.add(setup)
            lines.append(setup)
        lines.append(f'builtin eval "$__conveyor_set_x"{shlex.quote(text)}')
        lines.append(
            "{ __conveyor_status=$?; __conveyor_set_x=; [[ $- == *x* ]] && __conveyor_set_x=" + _SET_X + "; set +x; }"
            f" 2>/dev/null; builtin printf '\\n%s %s\\n' '{self._marker}' \"$__conveyor_status\" >&{_STATUS_FD}"
        )
        with contextlib.suppress(BrokenPipeError):  # the shell ended: its exit code is read below
            _write_all(self._commands, ("\n".join(lines) + "\n").encode())
        while True:
            with contextlib.suppress(queue.Empty):  # returns as soon as the command's status is printed
                return Outcome(self._statuses.get(timeout=_POLL_SECONDS))
            stopped = should_stop()
            if stopped:
                self.close(_STOPPED_READ_SECONDS)
                return Outcome(None, stopped)
            exit_code = self._exit_code()
            if exit_code is not None:
                self.close(_READ_SECONDS)  # what it printed before it ended is read to its end
                return Outcome(exit_code, ended_shell=True)

    def _exit_code(self) -> int | None:
        """The shell's exit code once it has ended, else None."""
        if self._container is not None:
            return self._container_exit
        assert self._process is not None
        return self._process.poll()

    def close(self, read_seconds: float = _STOPPED_READ_SECONDS) -> None:
        """Kill the shell and whatever its commands left in its group; log what they printed."""
        self.ended = True
        if self._commands is not None:
            os.close(self._commands)
            self._commands = None
        if self._container is not None and self._pump is None:
            os.close(self._container.output_fd)
        if self._process is None:
            if self._pump is not None:
                self._pump.join(timeout=read_seconds)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
        if self._pump is not None:
            # a process that left the group (setsid) may hold the pipe open until the sandbox ends: not waited for
            self._pump.join(timeout=read_seconds)

    def _start(self, variables: Mapping[str, str]) -> str | None:
        bash = shutil.which("bash", path=variables.get("PATH")) or shutil.which("bash")
        if bash is None:
            self.ended = True
            return "The job's scripts run in Bash, which this runner does not have."
        read_end, self._commands = os.pipe()
        argv = [bash, "--noprofile", "--norc", f"/dev/fd/{read_end}"]
        try:
            self._process = subprocess.Popen(
                argv,
                cwd=self._cwd,
                env=dict(variables),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(read_end,),
            )
        except OSError as error:
            self.ended = True
            return f"The job's shell could not start: {error.strerror}."
        finally:
            os.close(read_end)
        self._sent = dict(variables)
        assert self._process.stdout is not None
        self._pump = threading.Thread(target=self._read, args=(self._process.stdout,), name="shell", daemon=True)
        self._pump.start()
        # the shell holds its script on a descriptor of its own: the one it was given is closed for its commands
        _write_all(self._commands, f"exec {read_end}<&- {_STATUS_FD}>&1; __conveyor_set_x=\n".encode())
        return None

    def _start_in_container(self) -> str | None:
        """Take the container's shell: its first process reads the marker line, then passes the rest to Bash."""
        assert self._container is not None
        self._commands = self._container.commands_fd
        output = os.fdopen(self._container.output_fd, "rb")
        self._pump = threading.Thread(target=self._read, args=(output,), name="shell", daemon=True)
        self._pump.start()
        try:
            _write_all(self._commands, f"{self._marker}\nexec 3<&- {_STATUS_FD}>&1; __conveyor_set_x=\n".encode())
            _write_all(self._commands, f"cd {shlex.quote(self._cwd.as_posix())}\n".encode())
        except OSError as error:
            self.ended = True
            return f"The job's shell in its container could not start: {error.strerror}."
        return None

    def _exports(self, variables: Mapping[str, str]) -> list[str]:
        changed = {name: value for name, value in variables.items() if self._sent.get(name) != value}
        self._sent.update(changed)
        return [f"export {name}={shlex.quote(value)}" for name, value in changed.items() if _NAME.fullmatch(name)]

    def _read(self, stream: IO[bytes]) -> None:
        """Log each line the shell prints; a marker line is a command's status, and the blank line before it
        (the marker's own newline, which ends a last line printed without one) is not logged."""
        status = re.compile(re.escape(self._marker) + r" (\d+)")
        shell_ended = re.compile(re.escape(self._marker) + r"-ended (-?\d+)")
        blank = False
        with stream:
            while raw := stream.readline(MAX_LINE_BYTES):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                marked = line.startswith(self._marker)  # the regexes only for lines that may be a marker's
                if marked and self._container is not None and (gone := shell_ended.fullmatch(line)):
                    self._container_exit = int(gone.group(1))
                    blank = False
                    continue
                ended = status.fullmatch(line) if marked else None
                if ended:
                    blank = False
                    self._statuses.put(int(ended.group(1)))
                    continue
                if blank:
                    self._on_line("")
                blank = not line
                if not blank:
                    self._on_line(_SESSION_LINE.sub("bash: ", line, count=1) if _SESSION_LINE.match(line) else line)
        if blank:
            self._on_line("")
        if self._container is not None and self._container_exit is None:
            self._container_exit = -9  # the container ended without a word (its first process was killed)


def _write_all(fd: int | None, data: bytes) -> None:
    if fd is None:
        raise BrokenPipeError
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
