"""The build cache: folders and files a job keeps from one successful build to the next.

An entry is ``path`` or ``path -> dependency, ...``. The path (relative to the build folder, or absolute inside it)
is kept as one tar.gz object in the job's own cache folder, and is restored after the checkout only while its
dependency files (which may use wildcards) hold what they held when it was saved. Where the objects live is the
``CacheStore``'s business: the runner's reaches them through the job protocol, by entry id, never by key.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from chalicelib.runner.artifacts import relative_pattern

MAX_ENTRY_BYTES = 3 * 1024**3  # AppVeyor's limit for a single entry
_EMPTY_FILE = hashlib.sha256(b"").hexdigest()

Log = Callable[[str], None]


class CacheStore(Protocol):
    """The job's cache folder, entry by entry id."""

    def metadata(self, entry_ids: list[str]) -> dict[str, dict[str, str] | None]:
        """Each entry's metadata, None for an entry that is not stored."""

    def download(self, entry_id: str, path: Path) -> bool:
        """The entry's archive into ``path``; False when it is gone."""

    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> None:
        """Store ``path`` as the entry's archive, replacing the one before."""

    def prune(self, keep: list[str]) -> int:
        """Delete the folder's entries other than ``keep``; how many were deleted."""


@dataclass(frozen=True)
class CacheEntry:
    """One configured entry, its paths made "/"-separated and relative to the build folder."""

    label: str  # the path as configured, for log lines
    path: str
    dependencies: tuple[str, ...]

    @property
    def entry_id(self) -> str:
        """The entry's name in a job's cache folder."""
        return hashlib.sha256(self.path.encode()).hexdigest()[:16]


def restore_cache(build_folder: Path, entries: list[str], store: CacheStore, log: Log) -> None:
    """Restore each entry whose archive exists and whose dependencies have not changed."""
    root = build_folder.resolve()
    parsed = parse_entries(build_folder, entries, log)
    stored = store.metadata([entry.entry_id for entry in parsed]) if parsed else {}
    for entry in parsed:
        metadata = stored.get(entry.entry_id)
        if metadata is None:
            log(f"Cache entry '{entry.label}' not found")
        elif metadata.get("dependencies") != dependencies_checksum(root, entry.dependencies):
            log(f"Cache entry '{entry.label}' is out of date: not restored")
        else:
            log(f"Restoring build cache entry '{entry.label}'")
            _download_and_extract(root, entry, store, log)


def save_cache(build_folder: Path, entries: list[str], store: CacheStore, log: Log) -> None:
    """Upload each entry whose contents changed; delete the job's entries that are no longer configured."""
    root = build_folder.resolve()
    parsed = parse_entries(build_folder, entries, log)
    stored = store.metadata([entry.entry_id for entry in parsed]) if parsed else {}
    for entry in parsed:
        local = root / entry.path
        if not (local.exists() or local.is_symlink()):
            log(f"Build cache entry '{entry.label}' not found in the build folder: not saved")
        elif not local.resolve().is_relative_to(root):
            log(f"Build cache entry '{entry.label}' points outside the build folder: not saved")
        else:
            metadata = {
                "dependencies": dependencies_checksum(root, entry.dependencies),
                "checksum": content_checksum(local, entry.path),
            }
            before = stored.get(entry.entry_id) or {}
            if all(before.get(name) == value for name, value in metadata.items()):
                log(f"Build cache entry '{entry.label}' is up to date")
            else:
                _upload(local, entry, store, metadata, log)
    stale = store.prune([entry.entry_id for entry in parsed])
    if stale:
        log(f"Removed {stale} build cache {'entry' if stale == 1 else 'entries'} no longer configured")


def parse_entries(build_folder: Path, entries: list[str], log: Log) -> list[CacheEntry]:
    """The usable entries; ones naming anything outside the build folder are left out with a warning."""
    parsed: list[CacheEntry] = []
    for text in entries:
        label, _, dependency_text = text.partition("->")
        label = label.strip()
        path = inside_build_folder(build_folder, label)
        if path is None:
            log(f"Cache entry '{label}' is outside the build folder: skipped")
            continue
        dependencies = []
        for dependency in (part.strip() for part in dependency_text.split(",")):
            relative = inside_build_folder(build_folder, dependency) if dependency else None
            if relative is not None:
                dependencies.append(relative)
            elif dependency:
                log(f"Dependency '{dependency}' of cache entry '{label}' is outside the build folder: ignored")
        parsed.append(CacheEntry(label=label, path=path, dependencies=tuple(dependencies)))
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


def dependencies_checksum(root: Path, dependencies: tuple[str, ...]) -> str:
    """sha256 over the dependency files' names and contents, by name; a missing file counts as empty."""
    files: dict[str, Path] = {}
    for pattern in dependencies:
        if "*" in pattern or "?" in pattern:
            try:
                files.update((path.relative_to(root).as_posix(), path) for path in root.glob(pattern))
            except ValueError:  # e.g. "a**b": it matches nothing
                continue
        else:
            files[pattern] = root / pattern
    digest = hashlib.sha256()
    for name in sorted(files):
        path = files[name]
        inside = path.is_file() and path.resolve().is_relative_to(root)
        digest.update(_line(name, _file_sha256(path) if inside else _EMPTY_FILE))
    return digest.hexdigest()


def content_checksum(local: Path, relative: str) -> str:
    """sha256 over what an archive of ``local`` would hold: names, kinds, sizes and contents, never times."""
    digest = hashlib.sha256()
    for line in _describe(local, relative):
        digest.update(line)
    return digest.hexdigest()


def _describe(path: Path, relative: str) -> Iterator[bytes]:
    if path.is_symlink():  # archived as a link, as tarfile does without dereference
        yield _line(relative, "link", os.readlink(path))
    elif path.is_dir():
        yield _line(relative, "folder")
        for child in sorted(path.iterdir(), key=lambda child: child.name):
            yield from _describe(child, f"{relative}/{child.name}")
    elif path.is_file():
        yield _line(relative, "file", str(path.stat().st_size), _file_sha256(path))


def _line(*fields: str) -> bytes:
    return "\0".join(fields).encode("utf-8", "surrogateescape") + b"\n"


def _file_sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _upload(local: Path, entry: CacheEntry, store: CacheStore, metadata: dict[str, str], log: Log) -> None:
    with tempfile.TemporaryDirectory(prefix="conveyor-cache-") as scratch:
        archive = Path(scratch, "entry.tgz")
        log(f"Updating build cache entry '{entry.label}'")
        with tarfile.open(archive, "w:gz", compresslevel=1) as tar:  # fast, like AppVeyor's 7z -mx=1
            tar.add(local, arcname=entry.path, filter=_archivable)  # links are kept as links, never followed
        size = archive.stat().st_size
        if size > MAX_ENTRY_BYTES:
            log(f"Build cache entry '{entry.label}' is {size:,} bytes, over the {MAX_ENTRY_BYTES:,} limit: not saved")
            return
        store.upload(entry.entry_id, archive, metadata)


def _download_and_extract(root: Path, entry: CacheEntry, store: CacheStore, log: Log) -> None:
    with tempfile.TemporaryDirectory(prefix="conveyor-cache-") as scratch:
        archive = Path(scratch, "entry.tgz")
        if not store.download(entry.entry_id, archive):  # deleted since its metadata was read
            log(f"Cache entry '{entry.label}' not found")
            return
        try:
            _extract(root, entry, archive, log)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as error:  # a damaged archive costs only the cache
            log(f"Cache entry '{entry.label}' could not be restored: {error}")


def _archivable(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """Files, folders and links; pipes and devices would be refused on restore anyway."""
    return member if member.isreg() or member.isdir() or member.issym() or member.islnk() else None


def _extract(root: Path, entry: CacheEntry, archive: Path, log: Log) -> None:
    """Extract the members below the entry's path; tarfile's "data" filter refuses any leaving the build folder."""
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            name = posixpath.normpath(member.name)
            if name != entry.path and not name.startswith(f"{entry.path}/"):
                log(f"Skipping '{member.name}' in cache entry '{entry.label}': not below its path")
                continue
            try:
                tar.extract(member, root, filter="data")
            except (tarfile.FilterError, OSError) as error:
                log(f"Skipping '{member.name}' in cache entry '{entry.label}': {error}")
