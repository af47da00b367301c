"""The build cache on a Windows build agent, by path. An entry is ``path`` or ``path -> dependency, ...`` as anywhere;
``%NAME%`` takes the job's variables (any case), and the path may lie outside the build folder, as on AppVeyor
(``%LOCALAPPDATA%\\pip\\cache``, ``C:\\Users\\builder\\.m2``): there is no sandbox here to keep it in, and the machine
is the team's. Dependencies are files of the build folder (wildcards allowed); an entry is restored only while they
hold what they held when it was saved, and saved only when what it holds changed. Each entry is one tar.gz in the
job's cache folder (the CacheStore of runner/cache.py), restored where it was saved, member by member below it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tarfile
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chalicelib.runner.artifacts import relative_pattern
from chalicelib.runner.cache import CacheStore, Log, restorable, upload_archive

_VARIABLE = re.compile(r"%([^%\s]+)%")


@dataclass(frozen=True)
class Entry:
    """One configured entry: the path it keeps, and its dependencies relative to the build folder."""

    label: str
    path: Path
    dependencies: tuple[str, ...]

    @property
    def entry_id(self) -> str:
        """The entry's name in the job's cache folder: of its path as configured, compared as Windows compares names
        (so agents whose %LOCALAPPDATA% differ share it)."""
        configured = self.label.replace("/", "\\").lower()
        return hashlib.sha256(f"windows:{configured}".encode()).hexdigest()[:16]


def expand(text: str, variables: Mapping[str, str]) -> str:
    """``%NAME%`` replaced by the variable's value, names in any case; an unknown name is left as it is (as cmd.exe
    leaves it)."""
    by_upper = {name.upper(): value for name, value in variables.items()}
    return _VARIABLE.sub(lambda match: by_upper.get(match.group(1).upper(), match.group(0)), text)


def parse_entries(build_folder: Path, entries: list[str], variables: Mapping[str, str], log: Log) -> list[Entry]:
    """The entries, their paths absolute (a relative one is in the build folder)."""
    parsed = []
    for text in entries:
        label, _, dependency_text = text.partition("->")
        label = label.strip()
        path = Path(os.path.normpath(build_folder / expand(label, variables)))
        dependencies = []
        for dependency in (part.strip() for part in dependency_text.split(",") if part.strip()):
            relative = relative_pattern(expand(dependency, variables))
            if relative is None:
                log(f"Dependency '{dependency}' of cache entry '{label}' is outside the build folder: ignored")
            else:
                dependencies.append(relative)
        parsed.append(Entry(label, path, tuple(dependencies)))
    return parsed


def restore(build_folder: Path, entries: list[str], variables: Mapping[str, str], store: CacheStore, log: Log) -> None:
    """Restore each entry whose archive exists and whose dependencies have not changed."""
    parsed = parse_entries(build_folder, entries, variables, log)
    stored = store.metadata([entry.entry_id for entry in parsed]) if parsed else {}
    for entry in parsed:
        checksum = functools.partial(dependencies_checksum, build_folder, entry.dependencies)
        if restorable(entry.label, stored.get(entry.entry_id), checksum, log):
            _download_and_extract(entry, store, log)


def save(build_folder: Path, entries: list[str], variables: Mapping[str, str], store: CacheStore, log: Log) -> None:
    """Upload each entry whose contents changed; delete the job's entries no longer configured."""
    parsed = parse_entries(build_folder, entries, variables, log)
    stored = store.metadata([entry.entry_id for entry in parsed]) if parsed else {}
    for entry in parsed:
        if not entry.path.exists():
            log(f"Build cache entry '{entry.label}' not found: not saved")
            continue
        metadata = {
            "dependencies": dependencies_checksum(build_folder, entry.dependencies),
            "checksum": content_checksum(entry.path),
        }
        before = stored.get(entry.entry_id) or {}
        if all(before.get(name) == value for name, value in metadata.items()):
            log(f"Build cache entry '{entry.label}' is up to date")
        else:
            _upload(entry, store, metadata, log)
    stale = store.prune([entry.entry_id for entry in parsed])
    if stale:
        log(f"Removed {stale} build cache {'entry' if stale == 1 else 'entries'} no longer configured")


def dependencies_checksum(build_folder: Path, dependencies: tuple[str, ...]) -> str:
    """sha256 over the dependency files' names and contents; a missing one counts as empty."""
    names: set[str] = set()
    for pattern in dependencies:
        if "*" in pattern or "?" in pattern:
            names.update(path.relative_to(build_folder).as_posix() for path in build_folder.glob(pattern))
        else:
            names.add(pattern)
    digest = hashlib.sha256()
    for name in sorted(names):
        path = build_folder / name
        digest.update(f"{name}\0{_file_sha256(path) if path.is_file() else ''}\n".encode())
    return digest.hexdigest()


def content_checksum(path: Path) -> str:
    """sha256 over what an archive of the entry would hold: names, sizes and contents, never times."""
    digest = hashlib.sha256()
    for member in sorted([path, *path.rglob("*")] if path.is_dir() else [path]):
        name = member.relative_to(path.parent).as_posix()
        if member.is_file():
            digest.update(f"{name}\0file\0{member.stat().st_size}\0{_file_sha256(member)}\n".encode())
        else:
            digest.update(f"{name}\0folder\n".encode())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _upload(entry: Entry, store: CacheStore, metadata: dict[str, str], log: Log) -> None:
    def add_path(tar: tarfile.TarFile) -> None:
        tar.add(entry.path, arcname=entry.path.name)

    upload_archive(entry.label, entry.entry_id, add_path, store, metadata, log)


def _download_and_extract(entry: Entry, store: CacheStore, log: Log) -> None:
    """The archive's members below the entry's name, into the folder that holds the entry: tarfile's "data" filter
    refuses any that would land outside it."""
    with tempfile.TemporaryDirectory(prefix="conveyor-cache-") as scratch:
        archive = Path(scratch, "entry.tgz")
        if not store.download(entry.entry_id, archive):  # deleted since its metadata was read
            log(f"Cache entry '{entry.label}' not found")
            return
        name = entry.path.name
        try:
            with tarfile.open(archive, "r:gz") as tar:
                members = [m for m in tar.getmembers() if m.name == name or m.name.startswith(f"{name}/")]
                entry.path.parent.mkdir(parents=True, exist_ok=True)
                tar.extractall(entry.path.parent, members=members, filter="data")
        except (tarfile.TarError, EOFError, zlib.error, OSError) as error:  # a damaged archive costs only the cache
            log(f"Cache entry '{entry.label}' could not be restored: {error}")
