"""Which releases of the machine's tool cache running jobs hold (executors/tool_cache.py decides what is installed):
a job holds each release it is handed until its container is gone, a shared lock on a file of its own in the
cache's ``.held`` folder, whose time says when a job was last handed it. A release is removed only when no job
holds it, under that file's exclusive lock, so no job is ever left with a release removed under it; and a full
cache makes room for a version a job asks for by removing releases no job holds, the least lately handed first, so
that one tenant's builds asking for many releases cannot keep other tenants' versions out of the cache for good."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from chalicelib.executors import tool_install

HELD = ".held"  # in the cache: a file a release's name


def hold(release: Path) -> IO[str] | None:
    """Hold ``release`` for a job, stamped as handed now, until the file returned is closed; None when it was
    removed meanwhile."""
    folder = release.parent / HELD
    folder.mkdir(mode=0o755, exist_ok=True)
    held = open(folder / release.name, "a")  # noqa: SIM115 (the job's holds are closed when its container is gone)
    fcntl.flock(held.fileno(), fcntl.LOCK_SH)  # waits while a removal of it has its exclusive lock
    if not release.is_dir():
        held.close()
        return None
    os.utime(held.fileno())
    return held


def remove_unless_held(release: Path) -> bool:
    """Remove ``release`` unless a job holds it; whether it was removed."""
    marker = release.parent / HELD / release.name
    marker.parent.mkdir(mode=0o755, exist_ok=True)
    with open(marker, "a") as held:
        try:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        removed = release.parent / f".{release.name}"  # a scratch name: what a killed service leaves goes too
        try:
            release.rename(removed)  # under the lock: a job's hold then finds it gone
        except OSError:
            return False
        marker.unlink()
    shutil.rmtree(removed, ignore_errors=True)
    return True


def make_room(releases: Iterable[Path], megabytes: int) -> int:
    """Remove releases no job holds, the least lately handed first, until ``megabytes`` are freed; none when
    removing them all would not free that much (nothing is removed in vain). The megabytes freed."""
    sizes = [(release, tool_install.megabytes(release)) for release in sorted(releases, key=_handed)]
    if sum(size for _, size in sizes) < megabytes:
        return 0
    freed = 0
    for release, size in sizes:
        if freed >= megabytes:
            break
        if remove_unless_held(release):
            freed += size
    return freed


def _handed(release: Path) -> float:
    """When a job was last handed ``release`` (never: 0)."""
    with contextlib.suppress(OSError):
        return (release.parent / HELD / release.name).stat().st_mtime
    return 0.0
