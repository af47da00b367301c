"""How one release gets into the machine's tool cache (executors/tool_cache.py decides which, and when): pip installs
it into a scratch folder of the cache, renamed into place once complete, so the cache never holds half a release,
and pip is stopped, with anything it started, when the job it is for ends or runs out of time. pip's own temporary
files (it downloads and unpacks a whole release there first) are in that scratch folder too: a pip killed for a
cancelled job leaves nothing on the machine's disk outside the cache, however often a build is started and
cancelled."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

_PIP = (sys.executable, "-m", "pip")  # the service's own pip, run apart from it
_POLL_SECONDS = 0.2  # how soon a job's end or its lock's release is noticed


class JobEnded(Exception):
    """The job ended (cancelled, its lease lost) while its tools were installed: nothing more is installed for it."""


def install(package: str, version: str, target: Path, seconds: float, ended: Callable[[], bool]) -> None:
    """pip's install of the newest release of ``package`` ``version`` into ``target``, in at most ``seconds``
    (subprocess.TimeoutExpired); JobEnded when ``ended()`` says so first; CalledProcessError or OSError when it
    failed. Nothing of it is left but a complete ``target``."""
    scratch = Path(tempfile.mkdtemp(prefix=f".{package}-", dir=target.parent))
    release, temporary = scratch / "release", scratch / "tmp"
    try:
        temporary.mkdir()
        _pip(
            ["install", "--quiet", "--no-deps", "--only-binary=:all:", "--no-compile", "--disable-pip-version-check",
             "--no-cache-dir", "--target", str(release), f"{package}=={version}.*"],
            seconds, ended, {**os.environ, "TMPDIR": str(temporary)},
        )  # fmt: skip
        release.chmod(0o755)
        release.rename(target)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(scratch)


def remove_scratch(cache: Path, packages: list[str]) -> None:
    """Remove what installs killed with their service left; only under the cache's lock (no other install runs)."""
    for package in packages:
        for scratch in cache.glob(f".{package}-*"):
            shutil.rmtree(scratch, ignore_errors=True)


def locked(fd: int, deadline: float, ended: Callable[[], bool]) -> bool:
    """Whether the lock on ``fd`` was taken before ``deadline`` (time.monotonic()); JobEnded when the job ends
    first."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            if ended():
                raise JobEnded from None
            time.sleep(_POLL_SECONDS)


def megabytes(folder: Path) -> int:
    """The disk space the files under ``folder`` take."""
    used = 0
    for path, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(path, name)).st_blocks * 512
    return used // 2**20


def _pip(arguments: list[str], seconds: float, ended: Callable[[], bool], environment: dict[str, str]) -> None:
    """Run pip with ``arguments`` for at most ``seconds``; it is killed, with anything it started, when the time
    is over (TimeoutExpired) or the job ends (JobEnded). CalledProcessError when it fails."""
    command = [*_PIP, *arguments]
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True,
            env=environment,
        )  # fmt: skip
        stop_at = time.monotonic() + seconds
        try:
            while process.poll() is None:
                if ended():
                    raise JobEnded
                if time.monotonic() >= stop_at:
                    raise subprocess.TimeoutExpired(command, seconds)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=_POLL_SECONDS)
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process.returncode != 0:
            errors.seek(0)
            raise subprocess.CalledProcessError(process.returncode, command, stderr=errors.read())
