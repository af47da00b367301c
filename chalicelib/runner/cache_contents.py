"""What a cache entry holds, read beneath the build folder: its members (files open while they are current,
folders, links kept as links, never followed), and the checksums that say whether it, or its dependencies,
changed since it was saved (runner/cache.py saves and restores entries)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from chalicelib.runner.beneath import Pinned, opened

_EMPTY_FILE = hashlib.sha256(b"").hexdigest()


def dependencies_checksum(root: Pinned, dependencies: tuple[str, ...]) -> str:
    """sha256 over the dependency files' names and contents, each read from a descriptor opened beneath the build
    folder; a missing file (or one leading out) counts as empty."""
    names: set[str] = set()
    for pattern in dependencies:
        if "*" in pattern or "?" in pattern:
            try:
                names.update(path.relative_to(root.path).as_posix() for path in root.path.glob(pattern))
            except ValueError:  # e.g. "a**b": it matches nothing
                continue
        else:
            names.add(pattern)
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(_line(name, _dependency_sha256(root, name)))
    return digest.hexdigest()


def _dependency_sha256(root: Pinned, relative: str) -> str:
    try:
        fd = root.open_file(relative)
    except OSError:  # missing, a folder, or outside
        return _EMPTY_FILE
    with opened(fd):
        return _fd_sha256(fd)


def content_checksum(root: Pinned, relative: str) -> str:
    """sha256 over what an archive of the entry would hold: names, kinds, sizes and contents, never times; raises
    FileNotFoundError when it is missing, Outside when it is a link leading out of the build folder."""
    digest = hashlib.sha256()
    for member in members(root, relative):
        if member.target is not None:
            digest.update(_line(member.name, "link", member.target))
        elif member.fd is None:
            digest.update(_line(member.name, "folder"))
        else:
            digest.update(_line(member.name, "file", str(member.info.st_size), _fd_sha256(member.fd)))
    return digest.hexdigest()


@dataclass(frozen=True)
class Member:
    """One thing an entry's archive holds: a file (open while it is current), a folder or a link."""

    name: str  # in the archive: the path relative to the build folder
    info: os.stat_result
    fd: int | None = None  # a file's descriptor
    target: str | None = None  # a link's target


def members(root: Pinned, relative: str) -> Iterator[Member]:
    """The entry's path and everything below it, opened beneath the build folder; links are kept, never followed
    (the entry's own path may be a link, then only to somewhere inside the build folder)."""
    parent, _, name = relative.rpartition("/")
    parent_fd = root.open(parent or ".")
    with opened(parent_fd):
        if not stat.S_ISDIR(os.fstat(parent_fd).st_mode):
            raise FileNotFoundError(relative)
        if stat.S_ISLNK(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode):
            with contextlib.suppress(FileNotFoundError):  # a dangling link is kept as it is
                os.close(root.open(name, dir_fd=parent_fd))  # raises Outside for a link leading out
        yield from _below(root, parent_fd, name, relative)


def _below(root: Pinned, folder_fd: int, name: str, archive_name: str) -> Iterator[Member]:
    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        yield Member(archive_name, info, target=os.readlink(name, dir_fd=folder_fd))
    elif stat.S_ISDIR(info.st_mode):
        fd = root.open(name, dir_fd=folder_fd, follow=False)  # a folder swapped for a link meanwhile: ELOOP
        with opened(fd):
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                return
            yield Member(archive_name, os.fstat(fd))
            for child in sorted(os.listdir(fd)):
                yield from _below(root, fd, child, f"{archive_name}/{child}")
    elif stat.S_ISREG(info.st_mode):
        try:
            fd = root.open_file(name, dir_fd=folder_fd, follow=False)
        except OSError:  # swapped for a link, a folder or a pipe meanwhile
            return
        with opened(fd):
            yield Member(archive_name, os.fstat(fd), fd=fd)


def _line(*fields: str) -> bytes:
    return "\0".join(fields).encode("utf-8", "surrogateescape") + b"\n"


def _fd_sha256(fd: int) -> str:
    with open(fd, "rb", closefd=False) as file:
        file.seek(0)
        return hashlib.file_digest(file, "sha256").hexdigest()
