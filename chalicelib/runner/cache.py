"""The build cache: folders and files a job keeps from one successful build to the next.

An entry is ``path`` or ``path -> dependency, ...``. The path (relative to the build folder, or absolute inside it)
is kept as one tar.gz object in the job's own cache folder, and is restored after the checkout only while its
dependency files (which may use wildcards) hold what they held when it was saved. A path outside the build folder
(``$HOME/.cargo``, ``~/.m2``, ``C:\\Users\\appveyor\\.m2``, ``/opt/tools``) is kept by the job's own shell, with the
job's own rights (runner/outside_cache.py). Where the objects live is the
``CacheStore``'s business: the runner's reaches them through the job protocol, by entry id, never by key.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from chalicelib.runner.artifacts import relative_pattern
from chalicelib.runner.beneath import NotAFolder, Outside, Pinned, opened, pin
from chalicelib.runner.cache_contents import Member, content_checksum, dependencies_checksum, members
from chalicelib.runner.outside_cache import MAX_ENTRY_BYTES, JobShell, Log, expand_home, outside_path


class CacheStore(Protocol):
    """The job's cache folder, entry by entry id."""

    def metadata(self, entry_ids: list[str]) -> dict[str, dict[str, str] | None]:
        """Each entry's metadata, None for an entry that is not stored."""

    def download(self, entry_id: str, path: Path) -> bool:
        """The entry's archive into ``path``; False when it is gone."""

    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> str | None:
        """Store ``path`` as the entry's archive, replacing the one before; why not, when the service refused it."""

    def prune(self, keep: list[str]) -> int:
        """Delete the folder's entries other than ``keep``; how many were deleted."""


@dataclass(frozen=True)
class CacheEntry:
    """One configured entry, its paths made "/"-separated and relative to the build folder."""

    label: str  # the path as configured, for log lines
    path: str  # outside the build folder: absolute
    dependencies: tuple[str, ...]
    outside: bool = False  # kept by the job's own shell (runner/outside_cache.py)
    home: str | None = None  # the job's home folder: an entry below it is named from "~", as each job's may differ

    @property
    def entry_id(self) -> str:
        """The entry's name in a job's cache folder."""
        name = self.path
        if self.outside and self.home and (name + "/").startswith(self.home.rstrip("/") + "/"):
            name = "~" + name[len(self.home.rstrip("/")) :]
        return hashlib.sha256(name.encode()).hexdigest()[:16]


def restore_cache(
    build_folder: Path,
    entries: list[str],
    store: CacheStore,
    log: Log,
    *,
    base: Path | None = None,
    shell: JobShell | None = None,
) -> None:
    """Restore each entry whose archive exists and whose dependencies have not changed, into the build folder
    pinned below ``base`` (a folder the runner made; by default the build folder's parent), and by the job's
    ``shell`` outside it (without one, such entries are skipped)."""
    parsed = parse_entries(build_folder, entries, log, shell.home if shell else None)
    try:
        with pin(base or build_folder.parent, build_folder) as root:
            stored = store.metadata([entry.entry_id for entry in parsed]) if parsed else {}
            for entry in parsed:
                checksum = functools.partial(dependencies_checksum, root, entry.dependencies)
                if not restorable(entry.label, stored.get(entry.entry_id), checksum, log):
                    continue
                if entry.outside and shell is not None:
                    shell.restore(entry, store, log)
                else:
                    _download_and_extract(root, entry, store, log)
    except NotAFolder as error:
        log(f"The build cache is not restored: {error}")


def save_cache(
    build_folder: Path,
    entries: list[str],
    store: CacheStore,
    log: Log,
    *,
    base: Path | None = None,
    shell: JobShell | None = None,
) -> None:
    """Upload each entry whose contents changed; delete the job's entries that are no longer configured. The build
    folder is read pinned below ``base`` (a folder the runner made; by default the build folder's parent); what
    lies outside it, by the job's ``shell``."""
    parsed = parse_entries(build_folder, entries, log, shell.home if shell else None)
    try:
        with pin(base or build_folder.parent, build_folder) as root:
            stored = store.metadata([entry.entry_id for entry in parsed]) if parsed else {}
            for entry in parsed:
                before = stored.get(entry.entry_id) or {}
                if entry.outside and shell is not None:
                    shell.save(entry, dependencies_checksum(root, entry.dependencies), before, store, log)
                else:
                    _save_entry(root, entry, before, store, log)
    except NotAFolder as error:
        log(f"The build cache is not saved: {error}")
        return
    stale = store.prune([entry.entry_id for entry in parsed])
    if stale:
        log(f"Removed {stale} build cache {'entry' if stale == 1 else 'entries'} no longer configured")


def restorable(label: str, metadata: dict[str, str] | None, dependencies: Callable[[], str], log: Log) -> bool:
    """Whether a stored entry is restored: it is stored, and its dependencies (checksummed only then) hold what they
    held when it was saved; the job's log says which."""
    if metadata is None:
        log(f"Cache entry '{label}' not found")
    elif metadata.get("dependencies") != dependencies():
        log(f"Cache entry '{label}' is out of date: not restored")
    else:
        log(f"Restoring build cache entry '{label}'")
        return True
    return False


def _save_entry(root: Pinned, entry: CacheEntry, before: dict[str, str], store: CacheStore, log: Log) -> None:
    try:
        metadata = {
            "dependencies": dependencies_checksum(root, entry.dependencies),
            "checksum": content_checksum(root, entry.path),
        }
    except FileNotFoundError:
        log(f"Build cache entry '{entry.label}' not found in the build folder: not saved")
    except Outside:
        log(f"Build cache entry '{entry.label}' points outside the build folder: not saved")
    except OSError as error:  # swapped or removed while it was read
        log(f"Build cache entry '{entry.label}' could not be read ({error.strerror or error}): not saved")
    else:
        if all(before.get(name) == value for name, value in metadata.items()):
            log(f"Build cache entry '{entry.label}' is up to date")
        else:
            _upload(root, entry, store, metadata, log)


def parse_entries(build_folder: Path, entries: list[str], log: Log, home: str | None = None) -> list[CacheEntry]:
    """The usable entries. With the job's ``home``, a path outside the build folder is one (the home spelled as
    AppVeyor users spell it); without, it is left out with a warning, as is one no Linux job can keep."""
    parsed: list[CacheEntry] = []
    for text in entries:
        label, _, dependency_text = text.partition("->")
        label = label.strip()
        path = inside_build_folder(build_folder, expand_home(label, home) if home else label)
        outside = home is not None and path is None
        if outside and home is not None:
            path = outside_path(label, home)
        if path is None:
            where = "neither in the build folder nor a folder of this Linux job" if home else "outside the build folder"
            log(f"Cache entry '{label}' is {where}: skipped")
            continue
        dependencies = []
        for dependency in (part.strip() for part in dependency_text.split(",")):
            relative = inside_build_folder(build_folder, dependency) if dependency else None
            if relative is not None:
                dependencies.append(relative)
            elif dependency:
                log(f"Dependency '{dependency}' of cache entry '{label}' is outside the build folder: ignored")
        parsed.append(CacheEntry(label=label, path=path, dependencies=tuple(dependencies), outside=outside, home=home))
    return parsed


def inside_build_folder(build_folder: Path, path_text: str) -> str | None:
    """The path relative to the build folder, "/"-separated; None when it is not inside it (lexically)."""
    text = path_text.replace("\\", "/")
    if text.startswith("/"):  # this Linux runner allows absolute paths only inside the build folder
        absolute = PurePosixPath(posixpath.normpath(text))
        for base in (build_folder.absolute(), build_folder.resolve()):  # as given, or without its links
            if absolute.is_relative_to(base.as_posix()):
                return relative_pattern(absolute.relative_to(base.as_posix()).as_posix())
        return None
    return relative_pattern(text)


def _upload(root: Pinned, entry: CacheEntry, store: CacheStore, metadata: dict[str, str], log: Log) -> None:
    def add_members(tar: tarfile.TarFile) -> None:
        for member in members(root, entry.path):  # links are kept as links, never followed
            _add(tar, member)

    upload_archive(entry.label, entry.entry_id, add_members, store, metadata, log)


def upload_archive(
    label: str,
    entry_id: str,
    add: Callable[[tarfile.TarFile], None],
    store: CacheStore,
    metadata: dict[str, str],
    log: Log,
) -> None:
    """Upload the entry's tar.gz, which ``add`` fills; not when what it reads fails, nor when it is over the limit."""
    with tempfile.TemporaryDirectory(prefix="conveyor-cache-") as scratch:
        archive = Path(scratch, "entry.tgz")
        log(f"Updating build cache entry '{label}'")
        try:
            with tarfile.open(archive, "w:gz", compresslevel=1) as tar:  # fast, like AppVeyor's 7z -mx=1
                add(tar)
        except OSError as error:  # swapped, removed, shrunk or held by another process while it was read
            log(f"Build cache entry '{label}' could not be read ({error.strerror or error}): not saved")
            return
        size = archive.stat().st_size
        if size > MAX_ENTRY_BYTES:
            log(f"Build cache entry '{label}' is {size:,} bytes, over the {MAX_ENTRY_BYTES:,} limit: not saved")
            return
        if (why := store.upload(entry_id, archive, metadata)) is not None:
            log(f"Build cache entry '{label}' is not saved: {why}")


def _add(tar: tarfile.TarFile, member: Member) -> None:
    """One member into the archive, a file's contents read from its descriptor."""
    info = tarfile.TarInfo(member.name)
    info.mode, info.mtime = stat.S_IMODE(member.info.st_mode), int(member.info.st_mtime)
    if member.target is not None:
        info.type, info.linkname = tarfile.SYMTYPE, member.target
        tar.addfile(info)
    elif member.fd is None:
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
    else:
        info.size = member.info.st_size
        with open(member.fd, "rb", closefd=False) as file:
            file.seek(0)
            tar.addfile(info, file)


def _download_and_extract(root: Pinned, entry: CacheEntry, store: CacheStore, log: Log) -> None:
    with tempfile.TemporaryDirectory(prefix="conveyor-cache-") as scratch:
        archive = Path(scratch, "entry.tgz")
        if not store.download(entry.entry_id, archive):  # deleted since its metadata was read
            log(f"Cache entry '{entry.label}' not found")
            return
        try:
            _extract(root, entry, archive, log)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as error:  # a damaged archive costs only the cache
            log(f"Cache entry '{entry.label}' could not be restored: {error}")


def _extract(root: Pinned, entry: CacheEntry, archive: Path, log: Log) -> None:
    """Extract the members below the entry's path: tarfile's "data" filter refuses any leaving the build folder, and
    each is written through descriptors of its folders opened without following links (a link a build planted
    meanwhile refuses the member rather than leading the write out)."""
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            name = posixpath.normpath(member.name)
            if name != entry.path and not name.startswith(f"{entry.path}/"):
                log(f"Skipping '{member.name}' in cache entry '{entry.label}': not below its path")
                continue
            try:
                _write(root, tar, tarfile.data_filter(member, str(root.path)), name)
            except (tarfile.FilterError, OSError) as error:
                log(f"Skipping '{member.name}' in cache entry '{entry.label}': {error}")


def _write(root: Pinned, tar: tarfile.TarFile, member: tarfile.TarInfo, name: str) -> None:
    """One member, checked by the "data" filter, written beneath the build folder by descriptor."""
    parts = PurePosixPath(name).parts
    with opened(root.folder(parts[:-1] if not member.isdir() else parts)) as folder_fd:
        if member.isdir():
            return
        last = parts[-1]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(last, dir_fd=folder_fd)  # a file or a link in its place is replaced, never followed
        if member.issym():
            os.symlink(member.linkname, last, dir_fd=folder_fd)
            return
        source = tar.extractfile(member)  # a hard link's target's contents: the copy stands alone
        if source is None:
            return  # a device or a pipe, which the filter refused already
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with opened(os.open(last, flags, 0o600, dir_fd=folder_fd)) as fd, open(fd, "wb", closefd=False) as file:
            shutil.copyfileobj(source, file)
            os.fchmod(fd, member.mode if member.mode is not None else 0o644)
            os.utime(fd, (member.mtime, member.mtime))
