"""Opening files beneath a pinned folder: the build folder as the runner reads it, whatever a build does meanwhile.

A container build controls everything under its build folder, the folder itself included, and its background
processes live on while the runner reads: it may swap the folder, or any file in it, for a link to the machine's
files at any moment. So the runner never checks a name and then uses it again: it opens the build folder once,
component by component without following a link (``pin``), and then opens each file relative to that descriptor,
following links as the build laid them out, and checks where what it OPENED is (``Pinned.holds``) before reading
that same descriptor. ``Pinned.path`` names the opened folder (``/proc/self/fd/N``) whatever is renamed later.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# a pipe or a terminal neither blocks nor binds; on Windows (a build agent there) these names do not exist, and the
# runner reads the build folder by its paths instead (runner/windows/artifacts.py)
_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
_FOLDER = _READ | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


class NotAFolder(OSError):
    """The build folder (or a folder on the way to it) is no longer a folder: a build replaced it."""


class Outside(OSError):
    """What a name opened is not beneath the pinned folder (a link, or a swap, led out)."""


def descriptor_path(fd: int) -> Path:
    """The name of an open descriptor that keeps naming what was opened (for a file: that file, never a name)."""
    return Path(f"/proc/self/fd/{fd}")


def _where(fd: int) -> PurePosixPath:
    return PurePosixPath(os.readlink(descriptor_path(fd)))


@dataclass(frozen=True)
class Pinned:
    """A folder opened once, by descriptor."""

    fd: int

    @property
    def path(self) -> Path:
        """The opened folder's name for path-based tools (glob, walk): it follows the folder wherever it moves."""
        return descriptor_path(self.fd)

    def holds(self, fd: int) -> bool:
        """Whether an open descriptor is the pinned folder or below it, where they both are now."""
        return _where(fd).is_relative_to(_where(self.fd))

    def open(self, relative: str, *, dir_fd: int | None = None, follow: bool = True) -> int:
        """A descriptor of what ``relative`` names (from ``dir_fd``, by default the pinned folder), checked to be
        beneath the pinned folder; raises Outside (closing it) when it is not."""
        flags = _READ if follow else _READ | os.O_NOFOLLOW
        fd = os.open(relative, flags, dir_fd=self.fd if dir_fd is None else dir_fd)
        if not self.holds(fd):
            os.close(fd)
            raise Outside(f"{relative} is outside the build folder")
        return fd

    def open_file(self, relative: str, *, dir_fd: int | None = None, follow: bool = True) -> int:
        """As ``open``, for a regular file only (IsADirectoryError or Outside otherwise)."""
        fd = self.open(relative, dir_fd=dir_fd, follow=follow)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise IsADirectoryError(f"{relative} is not a file")
        return fd

    def folder(self, parts: tuple[str, ...]) -> int:
        """A descriptor of the folder ``parts`` name below the pinned one, each made when missing and opened without
        following a link (a link on the way, planted by a build, raises NotAFolder): where the runner writes."""
        fd = os.dup(self.fd)
        try:
            for name in parts:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
                try:
                    inner = os.open(name, _FOLDER, dir_fd=fd)
                except OSError as error:
                    raise NotAFolder(f"{name} is no folder ({error.strerror})") from error
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd


@contextlib.contextmanager
def pin(base: Path, folder: Path) -> Iterator[Pinned]:
    """The folder, below ``base`` (a folder the runner made, which no build can replace), opened without following
    any link on the way; raises NotAFolder when a component is a link or no folder."""
    relative = folder.relative_to(base)
    fd = os.open(base, _READ | os.O_DIRECTORY)
    try:
        for name in relative.parts:
            try:
                inner = os.open(name, _FOLDER, dir_fd=fd)
            except OSError as error:  # ELOOP: a link; ENOTDIR: a file; ENOENT: gone
                raise NotAFolder(f"the build folder is no longer a folder ({name}: {error.strerror})") from error
            os.close(fd)
            fd = inner
        yield Pinned(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def opened(fd: int) -> Iterator[int]:
    """Close a descriptor on leaving."""
    try:
        yield fd
    finally:
        os.close(fd)
