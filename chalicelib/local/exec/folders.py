"""Where ``conveyor exec`` keeps what jobs hand over, in the checkout: ``.conveyor/exec/artifacts/<job>/`` (each job's
emptied when it starts) and, with ``--cache``, ``.conveyor/exec/cache/<job>/``. ``.conveyor/exec/`` ignores itself
(a ``.gitignore`` of ``*``), so git leaves it out in any repository, and so does the snapshot a job builds.

A checkout may come from anyone (a pull request being tried), and exec runs as root: a ``.conveyor`` or
``.conveyor/exec`` that is a link or a file, a ``.conveyor/exec`` git tracks anything in, or one holding a link, is
refused rather than followed; and each file exec writes or serves there is opened without following a link (one
left there is replaced), so nothing it writes or hands a job is ever a file of the host's outside these folders.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Any, BinaryIO

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

from chalicelib.errors import Invalid
from chalicelib.local.exec.jobs import ExecJob
from chalicelib.local.exec.plan import slug

EXEC_FOLDER = (".conveyor", "exec")
_BLOCK = 1024 * 1024


class UnsafeFolder(Exception):
    """A folder exec writes to is a link or not a folder; the message says which."""


class StateFolders:
    """The checkout's ``.conveyor/exec/`` folders."""

    def __init__(self, checkout: Path) -> None:
        self.root = _real_folders(checkout, EXEC_FOLDER)
        _refuse_foreign_files(checkout, self.root)
        write_new(self.root / ".gitignore", b"# conveyor exec's artifacts and cache: never committed\n*\n")
        self.artifacts = _real_folders(self.root, ("artifacts",))
        self._cache = self.root / "cache"

    def job_folder(self, job: ExecJob) -> Path:
        """The job's artifacts folder, emptied: what it holds is this run's."""
        folder = self.artifacts / job_folder_name(job.spec["jobId"], job.spec["jobName"])
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
        shutil.rmtree(folder, ignore_errors=True)
        return folder

    def artifact_path(self, job: ExecJob, file_name: str) -> Path:
        """Where an artifact of ``file_name`` (a relative path) lands; Invalid for a name leading elsewhere."""
        parts = file_name.split("/")  # as the runner checks a pushed artifact's name (runner/worker_api.py)
        if any(part in ("", ".", "..") for part in parts):
            raise Invalid(f"{file_name!r} is not an artifact file name.")
        folder = _real_folders(self.artifacts, (job_folder_name(job.spec["jobId"], job.spec["jobName"]), *parts[:-1]))
        return folder / parts[-1]

    def cache_paths(self, job: ExecJob, entry_id: str) -> tuple[Path, Path]:
        """A cache entry's archive and metadata: each matrix job keeps its own cache, by its name, as the service."""
        digest = hashlib.sha256(job.spec["jobName"].encode()).hexdigest()[:16]
        folder = _real_folders(self.root, ("cache", digest))
        return folder / f"{entry_id}.tgz", folder / f"{entry_id}.json"

    def prune_cache(self, job: ExecJob, keep: list[str]) -> int:
        """Delete the job's cache entries other than ``keep``; how many went."""
        archive, _ = self.cache_paths(job, "0" * 16)
        stale = [path for path in archive.parent.glob("*.tgz") if path.stem not in keep]
        for path in stale:
            path.unlink(missing_ok=True)
            path.with_suffix(".json").unlink(missing_ok=True)
        return len(stale)


def job_folder_name(job_id: str, name: str) -> str:
    """A job's folder: its number, and its name in a file name's letters (``2-environment-flavour-vanilla``)."""
    number = job_id.removeprefix("exec")
    return f"{number}-{slug(name)}" if name else number


def receive(body: Any, size: int, target: Path) -> None:
    """Write an upload's ``size`` bytes to ``target``, never through a link left there."""
    with _created(target) as file:
        left = size
        while left > 0:
            block = body.read(min(_BLOCK, left))
            if not block:
                break
            file.write(block)
            left -= len(block)


def write_new(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` as a new file: whatever was there (a link too) is removed, never written through."""
    with _created(target) as file:
        file.write(data)


def open_regular(path: Path) -> BinaryIO | None:
    """``path`` opened for reading when it is a file itself; None when it is missing, a link or anything else."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # NONBLOCK: a pipe never hangs it
    except OSError:  # missing, or a link (ELOOP)
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return os.fdopen(descriptor, "rb")


def _created(target: Path) -> BinaryIO:
    target.unlink(missing_ok=True)  # a link is removed itself, not what it names
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    return os.fdopen(descriptor, "wb")


def _refuse_foreign_files(checkout: Path, root: Path) -> None:
    """Refuse a ``.conveyor/exec`` the checkout brought: one git tracks a file in, or one holding a link."""
    prefix = "/".join(EXEC_FOLDER).encode() + b"/"
    try:
        with Repo(str(checkout)) as repository:
            tracked = [path for path in repository.open_index() if path.startswith(prefix)]
    except NotGitRepository:
        tracked = []
    if tracked:
        raise UnsafeFolder(
            f"git tracks {tracked[0].decode(errors='replace')} in this checkout: .conveyor/exec/ is conveyor exec's "
            "own folder, and exec does not run a checkout that brings files there (git rm -r --cached .conveyor/exec)."
        )
    for folder, names, files in os.walk(root):
        for name in [*names, *files]:
            if os.path.islink(os.path.join(folder, name)):
                raise UnsafeFolder(
                    f"{os.path.join(folder, name)} is a link: conveyor exec writes only its own files in {root}, "
                    "never through a link; remove it."
                )


def _real_folders(base: Path, names: tuple[str, ...]) -> Path:
    """``base/names...``, each made when missing and each a real folder, never a link."""
    folder = base
    for name in names:
        folder = folder / name
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise UnsafeFolder(f"{folder} is a link or a file: conveyor exec writes only into a real folder there.")
        folder.mkdir(exist_ok=True)
    return folder
