"""The sandbox: each build job's runner in one of its own, on this machine. The local executor runs jobs in it
(``make run``, the tests), and so do build agents (``conveyor agent --builds``) on Linux.

The sandbox is made with util-linux: ``unshare`` gives the runner new PID, mount, IPC and UTS namespaces with a
fresh ``/proc`` (no process of the stack is visible, so no ``/proc/<pid>/environ`` of it can be read), and empty
``/tmp``, ``/var/tmp``, ``/dev/shm`` and ``/run/lock``; as root, ``setpriv`` then drops to ``nobody`` with no
capabilities and no way to gain any (no_new_privs). The runner is the namespace's first process: when it ends, the
kernel kills everything the job left behind. Without root, a user namespace maps the caller to root inside it instead.

The runner starts with an empty environment but PATH and the locale; its ticket comes on standard input.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from chalicelib.protocol.ticket import Ticket

log = logging.getLogger(__name__)
NOBODY = 65534
PROJECT_DIR = Path(__file__).resolve().parents[2]
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ")
PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
PRIVATE_IF_PRESENT = ("/run/lock",)  # world-writable too (Debian, Ubuntu): else a note one build leaves the next
UNSAFE_WARNING = (
    "WARNING: this build ran WITHOUT a sandbox (the stack's CONVEYOR_UNSAFE_NO_SANDBOX, or a build agent's "
    "--unsafe-no-sandbox): its scripts could see every process of this machine and what they hold."
)
STATE_FOLDER_VARIABLE = "CONVEYOR_STATE_DIR"  # the local stack's state folder, hidden from builds
DEFAULT_STATE_FOLDER = ".conveyor"  # where it is unless that says otherwise (local/persistence.py)
UNSAFE_SETTING = "Set CONVEYOR_UNSAFE_NO_SANDBOX=true"  # how the local stack is told to run jobs without one


class SandboxUnavailable(Exception):
    """No sandbox can be made here; the message says why and what to do."""


@dataclass(frozen=True)
class Sandbox:
    prefix: tuple[str, ...]  # the command line that runs a program inside a new sandbox


def _mount_script(as_root: bool, uid: int = NOBODY, writable: tuple[str, ...] = ()) -> str:
    """The shell lines that make the sandbox's folders, then start the runner (``"$@"``) as it should run.

    The home folder of the user running the service is emptied too (its files are the service's: cloud
    credentials, keys). The runner's own code (this project, its virtual environment and the Python it runs on)
    stays visible, read-only, even where it lives below a folder the sandbox empties (a clone in /tmp, a Python
    installed in root's home, a clone in a home folder of mode 0700): see _code_bound_back. ``writable``
    folders (a container job's folder) are bound back so too, writable; as root, the runner runs as ``uid``.
    """
    home = os.path.realpath(os.path.expanduser("~"))
    shared = [*PRIVATE_FOLDERS, *(f for f in PRIVATE_IF_PRESENT if os.path.isdir(f) and not os.path.islink(f))]
    private = [*shared, *([home] if home not in ("/", *shared) and os.path.isdir(home) else [])]
    lines = _code_bound_back(private, shared, [os.path.realpath(path) for path in writable])
    # the local stack's state folder (every table, and the key of every secret) may lie inside the project folder
    # kept above: it is covered with an empty folder. As root the build runs as nobody, whom its mode keeps out; as a
    # user, the build is that user to the kernel, and only this cover keeps it out.
    # The default folder is covered whatever this stack keeps: a stack that keeps nothing, or a second one, still
    # has an earlier or running stack's state there.
    for state in _state_folders():
        quoted = shlex.quote(state)  # below a folder emptied above, it is gone already
        lines.append(f"{{ [ ! -d {quoted} ] || mount -t tmpfs -o mode=0700,nosuid,nodev,size=4k tmpfs {quoted}; }}")
    # the kernel clears the parent-death signal (unshare's --kill-child) when the user changes: kept, the runner
    # still dies with the unshare that started it, and so with the service or agent above that
    drop = "--no-new-privs --inh-caps=-all --bounding-set=-all --pdeathsig keep"
    if as_root:
        lines.append(f'cd /tmp && exec setpriv --reuid={uid} --regid={uid} --clear-groups {drop} -- "$@"')
    else:
        # root of this user namespace could undo every mount above; in a namespace nested in it, as nobody, it
        # cannot: the kernel locks mounts inherited from a more privileged namespace
        nested = f"unshare --user --map-user={NOBODY} --map-group={NOBODY}"
        lines.append(f'cd /tmp && exec {nested} -- setpriv {drop} -- "$@"')
    return " && ".join(lines)


def code_reachable() -> str:
    """Shell lines, for a new mount namespace as root, that let a user of no rights (``nobody``) reach the runner's
    code wherever it was cloned: the Lambda runner's tests run its handler so, as its function runs a package."""
    return " && ".join(_code_bound_back([], [], []))


def _code_bound_back(private: list[str], shared: list[str], writable: list[str]) -> list[str]:
    """The lines that empty ``private`` folders (``shared``: every user's, mode 1777) and bind the runner's code and
    ``writable`` folders back in place: each is held open across the new mounts first. The folders above the code
    that others may not enter (a home of mode 0700 or 0750, a ``mktemp -d`` folder) are emptied too: below one, the
    code would be out of the runner's reach once it drops to ``nobody``; nothing else of it is the build's business.
    """
    code = sorted({str(PROJECT_DIR), os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)})
    kept = [path for path in code if not any(path.startswith(other + "/") for other in code)] + writable
    private = private + [folder for folder in closed_folders_above(kept) if not _below(folder, private)]
    lines = [f"exec {3 + index}<{shlex.quote(path)}" for index, path in enumerate(kept)]
    if private:
        lines.append(_unmount_below(private, kept))
    for folder in private:
        mode = "1777" if folder in shared else "0755"  # a home is only passed through, to kept code
        lines.append(f"mount -t tmpfs -o mode={mode},nosuid,nodev tmpfs {shlex.quote(folder)}")
    for index, path in enumerate(kept):
        quoted = shlex.quote(path)
        lines += [
            f"mkdir -p {quoted}",
            f"mount --no-canonicalize --bind /proc/self/fd/{3 + index} {quoted}",
            *([] if path in writable else [f"mount -o remount,bind,ro {quoted}"]),
            f"exec {3 + index}<&-",
        ]
    return lines


def _unmount_below(folders: list[str], kept: list[str]) -> str:
    """The line that lazily unmounts, in the sandbox's namespace only, what is mounted below ``folders`` but on the
    way to or below a ``kept`` path: another job's disk, copied into this namespace, would stay allocated until this
    runner ends, though its own job ended and unmounted it."""
    keep = [shlex.quote(path) for path in kept] + [f"{shlex.quote(path)}/*" for path in kept]
    keep += [shlex.quote(str(above)) for path in kept for above in Path(path).parents]
    below = [f"{shlex.quote(folder.rstrip('/'))}/*" for folder in folders]
    unmount = 'umount --lazy "$point" 2>/dev/null || true'  # a mount below one unmounted is gone with it
    choices = (f"{'|'.join(keep)}) ;; " if keep else "") + f"{'|'.join(below)}) {unmount};;"
    return f'{{ cut -d" " -f5 /proc/self/mountinfo | while read -r point; do case "$point" in {choices} esac; done; }}'


def closed_folders_above(paths: list[str]) -> list[str]:
    """The first folder above each path that others may not enter."""
    closed = set()
    for path in paths:
        above = Path("/")
        for part in Path(path).parts[1:-1]:
            above = above / part
            try:
                if not os.stat(above).st_mode & stat.S_IXOTH:
                    closed.add(str(above))
                    break
            except OSError:
                break
    return sorted(closed)


def _below(folder: str, others: list[str]) -> bool:
    return any(folder == other or folder.startswith(other.rstrip("/") + "/") for other in others)


def _state_folders() -> list[str]:
    """The local stacks' state folders a build must not see: the default one in the project folder, and the one
    CONVEYOR_STATE_DIR names."""
    configured = os.environ.get(STATE_FOLDER_VARIABLE, "").strip()
    folders = [str(PROJECT_DIR / DEFAULT_STATE_FOLDER)]
    if configured and os.path.isabs(configured):
        folders.append(configured)
    return sorted({os.path.realpath(folder) for folder in folders if os.path.isdir(folder)})


def _candidates() -> list[Sandbox]:
    namespaces = ("--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--ipc", "--uts")
    as_root = Sandbox(("unshare", *namespaces, "--", "/bin/sh", "-c", _mount_script(True), "sandbox"))
    as_user = Sandbox(
        ("unshare", "--user", "--map-root-user", *namespaces, "--", "/bin/sh", "-c", _mount_script(False), "sandbox")
    )
    return [as_root, as_user] if os.geteuid() == 0 else [as_user]


@functools.cache
def sandbox() -> Sandbox | str:
    """The sandbox this machine can make, or why it can make none (tried once per process)."""
    reasons = []
    for candidate in _candidates():
        try:
            probe = subprocess.run(
                [*candidate.prefix, "/bin/true"], env=environment(), capture_output=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            reasons.append(str(error))
            continue
        if probe.returncode == 0:
            return candidate
        reasons.append(probe.stderr.decode(errors="replace").strip()[:300] or f"exit code {probe.returncode}")
    return "; ".join(reasons) or "unshare is not available"


def check(unsafe: bool, unsafe_setting: str = UNSAFE_SETTING) -> str | None:
    """None when jobs can run here; else why they cannot (or, with ``unsafe``, the warning they carry), naming
    ``unsafe_setting``, how the caller is told to run them without one."""
    made = sandbox()
    if isinstance(made, Sandbox):
        return None
    if unsafe:
        return UNSAFE_WARNING
    raise SandboxUnavailable(
        "Builds cannot run: no sandbox could be made on this machine (util-linux unshare with PID and mount "
        f"namespaces, as root or through user namespaces): {made}. {unsafe_setting} to run them without one, only "
        "where every build is trusted."
    )


def as_user(uid: int, writable: tuple[str, ...]) -> Sandbox:
    """The sandbox as root makes it, its runner as ``uid`` with ``writable`` folders of this machine's (the
    container executor's: its runner writes the job's folder, as the container's user does)."""
    namespaces = ("--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--ipc", "--uts")
    return Sandbox(("unshare", *namespaces, "--", "/bin/sh", "-c", _mount_script(True, uid, writable), "sandbox"))


def run(
    ticket: Ticket,
    unsafe: bool,
    timeout: float,
    made_for_job: Sandbox | None = None,
    pass_fds: tuple[int, ...] = (),
    started: Callable[[], bool] | None = None,
) -> int:
    """Run the ticket's job in a new sandbox (``made_for_job``, else this machine's) and wait for it; the runner's
    exit code. ``pass_fds``: descriptors the runner is handed (a container's shell). ``started`` is called once the
    runner's process is started (it loads while its container starts), before it is handed its ticket: False
    kills it, handed nothing, and the job is the caller's (0)."""
    made = made_for_job or sandbox()
    warning = None if made_for_job else check(unsafe)
    runner = [sys.executable, "-I", "-m", "chalicelib.runner"]
    if isinstance(made, Sandbox):
        command = [*made.prefix, *runner]
    else:
        command = runner
        ticket = replace(ticket, warnings=(*ticket.warnings, warning or ""))
    # the runner dies with the service that started it (a stack killed outright): setpriv's pdeathsig, then
    # unshare's --kill-child, carry the signal into the sandbox
    dies_with_us = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []  # not on macOS
    process = subprocess.Popen(
        [*dies_with_us, *command],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
        cwd="/",
        start_new_session=True,
        pass_fds=pass_fds,
    )
    assert process.stdin is not None and process.stderr is not None
    said = _Stderr(process.stderr)
    if started is not None and not started():
        process.kill()
        process.wait()
        return 0
    try:
        process.stdin.write(ticket.to_json().encode())
        process.stdin.close()
    except BrokenPipeError:
        log.warning("job %s: the runner ended before it read its ticket", ticket.job_id)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()  # unshare --kill-child: everything in the sandbox goes with it
        code = process.wait()
    said.join()
    # util-linux 2.38's unshare does not pass on the SIGKILL that ended the runner (its first process): it says so
    # and exits 1. SIGKILL is the only signal from outside that ends a namespace's first process without a handler.
    return -signal.SIGKILL if code == 1 and said.unshare_lost_a_signal else code


class _Stderr:
    """The runner's standard error passed on to the service's, line by line, noting what unshare said of it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.unshare_lost_a_signal = False
        self._thread = threading.Thread(target=self._pass_on, args=(stream,), name="runner stderr", daemon=True)
        self._thread.start()

    def _pass_on(self, stream: IO[bytes]) -> None:
        with stream:
            for line in stream:
                if line.startswith(b"unshare: ") and (b"sigprocmask" in line or b"child exit failed" in line):
                    self.unshare_lost_a_signal = True
                with contextlib.suppress(Exception):  # a stderr that takes no bytes: not passed on, still drained
                    sys.stderr.buffer.write(line)
                    sys.stderr.buffer.flush()

    def join(self) -> None:
        self._thread.join(timeout=5)


def environment() -> dict[str, str]:
    """The runner's whole environment: where programs are and the locale, nothing of the service."""
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env["HOME"] = "/tmp"
    return env
