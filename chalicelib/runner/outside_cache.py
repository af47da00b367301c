"""Cache entries outside the build folder (``$HOME/.cargo``, ``~/.m2``, ``/opt/tools``), kept by the job itself.

AppVeyor caches any folder of its machine. Here the job's own shell archives and restores such an entry, with the
job's own rights: it reads nothing the job could not read, and writes nothing the job could not write (in a
container: its user's files of the container and its job folder; in the sandbox: what ``nobody`` may write there),
whatever the archive holds (links, ``..``, absolute names). The runner itself never opens those paths: in the
sandbox it runs as the job's user, and reading a path such as ``/proc/self/mem`` would hand the job the runner's
memory. It only moves the archive between the job's folder and the cache, and reads it by descriptor beneath
the folder it made (runner/beneath.py). Archives and restored files count against the job's disk, as all it writes.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from chalicelib.runner.beneath import Pinned, descriptor_path, opened, pin

MAX_ENTRY_BYTES = 3 * 1024**3  # AppVeyor's limit for a single entry

EXCHANGE = ".conveyor-cache"  # beside the build folder, in the job's folder: both the runner and the job reach it
# the home folder as appveyor.yml files write it: $HOME, ~, and AppVeyor's Windows home (C:\Users\appveyor)
_HOME = re.compile(r"^(?:\$HOME|\$\{HOME\}|~|%USERPROFILE%|[A-Za-z]:[\\/]Users[\\/]appveyor)(?=$|[\\/])", re.I)
_CHECKSUM = re.compile(r"^[0-9a-f]{64}")
_NOT_EXCHANGE = f"-name {EXCHANGE} -prune -o"  # an entry of the whole home holds the shared folder (a container's)
# Windows's os has neither flag (this module loads there too: the agent imports the runner's job)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def expand_home(text: str, home: str) -> str:
    """The entry with a leading home folder spelled as AppVeyor users spell it replaced by the job's ``home``."""
    found = _HOME.match(text.strip())
    if not found:
        return text.strip()
    return home.rstrip("/") + text.strip()[found.end() :].replace("\\", "/")


def outside_path(text: str, home: str) -> str | None:
    """The absolute folder or file an entry names outside the build folder, normalized; None when it names none
    this job can keep (a relative or Windows path, a wildcard, the whole filesystem)."""
    expanded = expand_home(text, home)
    if not expanded.startswith("/") or "*" in expanded or "?" in expanded:
        return None
    normalized = posixpath.normpath(expanded)
    return None if normalized in ("/", "//") else normalized


Log = Callable[[str], None]


class CacheEntry(Protocol):
    """An entry as runner/cache.py parsed it."""

    @property
    def label(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def entry_id(self) -> str: ...


class CacheStore(Protocol):
    """The job's cache folder (runner/cache.py's), as far as archives go."""

    def download(self, entry_id: str, path: Path) -> bool: ...
    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> str | None: ...


@dataclass(frozen=True)
class JobShell:
    """The job's own shell, and the folder it shares with the runner: ``folder`` on the runner's side (below
    ``base``, a folder the runner made), ``inside`` where the shell sees it. ``run`` runs a command quietly;
    False when the shell could not (it ended, the job was stopped)."""

    home: str
    base: Path
    folder: Path
    inside: str
    run: Callable[[str], bool]

    def restore(self, entry: CacheEntry, store: CacheStore, log: Log) -> None:
        """Extract the entry's archive where it was, by the job's own tar, only what lies below its path."""
        with self._exchange(log) as exchange:
            if exchange is None:
                return
            name = f"{entry.entry_id}.tgz"
            with tempfile.TemporaryDirectory(prefix="conveyor-cache-") as scratch:
                downloaded = Path(scratch, name)
                if not store.download(entry.entry_id, downloaded):
                    log(f"Cache entry '{entry.label}' not found")
                    return
                with (
                    downloaded.open("rb") as source,
                    opened(os.open(name, _CREATE, 0o644, dir_fd=exchange.fd)) as fd,
                    open(fd, "wb", closefd=False) as target,
                ):
                    shutil.copyfileobj(source, target)
            if not self._tar(exchange, f"-xzf {shlex.quote(f'{self.inside}/{name}')}", entry):
                log(f"Cache entry '{entry.label}' could not be restored: the job's tar failed")

    def save(self, entry: CacheEntry, dependencies: str, before: dict[str, str], store: CacheStore, log: Log) -> None:
        """Archive the entry by the job's own tar when its contents changed, and upload it."""
        with self._exchange(log) as exchange:
            if exchange is None:
                return
            folder, relative = _split(entry.path)
            sums = shlex.quote(f"{self.inside}/{entry.entry_id}.sum")
            listed = self.run(
                _quietly(
                    f"{{ [ -e {relative} ] || [ -L {relative} ]; }} && {{ find {relative} {_NOT_EXCHANGE} -printf "
                    f"'%p %y %s %l\\n' | LC_ALL=C sort; find {relative} {_NOT_EXCHANGE} -type f -print0 | "
                    "LC_ALL=C sort -z | xargs -0r sha256sum --; "
                    f"}} | sha256sum > {sums}",
                    folder,
                )
            )
            checksum = _small_file(exchange, f"{entry.entry_id}.sum")[:64]
            if not listed:
                log(f"Build cache entry '{entry.label}' is not saved: the job's shell has ended")
                return
            if not _CHECKSUM.match(checksum):
                log(f"Build cache entry '{entry.label}' not found: not saved")
                return
            metadata = {"dependencies": dependencies, "checksum": checksum}
            if all(before.get(key) == value for key, value in metadata.items()):
                log(f"Build cache entry '{entry.label}' is up to date")
                return
            log(f"Updating build cache entry '{entry.label}'")
            name = f"{entry.entry_id}.tgz"
            if not self._tar(exchange, f"--exclude={EXCHANGE} -czf {shlex.quote(f'{self.inside}/{name}')}", entry):
                log(f"Build cache entry '{entry.label}' could not be read: the job's tar failed; not saved")
                return
            with opened(exchange.open_file(name, follow=False)) as fd:
                size = os.fstat(fd).st_size
                if size > MAX_ENTRY_BYTES:
                    limit = f"over the {MAX_ENTRY_BYTES:,} limit"
                    log(f"Build cache entry '{entry.label}' is {size:,} bytes, {limit}: not saved")
                    return
                if (why := store.upload(entry.entry_id, descriptor_path(fd), metadata)) is not None:
                    log(f"Build cache entry '{entry.label}' is not saved: {why}")

    def _tar(self, exchange: Pinned, options: str, entry: CacheEntry) -> bool:
        """Run the job's tar on the entry's name from the entry's folder; whether it succeeded."""
        done = f"{entry.entry_id}.done"
        (folder, relative), marker = _split(entry.path), shlex.quote(f"{self.inside}/{done}")
        return (
            self.run(_quietly(f"tar {options} -- {relative} && : > {marker}", folder))
            and _small_file(exchange, done) == ""
        )

    @contextlib.contextmanager
    def _exchange(self, log: Log) -> Iterator[Pinned | None]:
        """The shared folder, made afresh beneath ``base`` and removed after (None when it cannot be made)."""
        parts = self.folder.relative_to(self.base).parts
        try:
            with pin(self.base, self.base) as base, opened(base.folder(parts[:-1])) as parent:
                _remove(parts[-1], parent)
                made = base.folder(parts)
        except OSError as error:  # NotAFolder: the job put something else in its way
            log(f"Cache entries outside the build folder are not kept: {error}")
            yield None
            return
        try:
            os.fchmod(made, 0o700)
            yield Pinned(made)
        except OSError as error:  # what the job left in the shared folder, or took away meanwhile
            log(f"A cache entry outside the build folder could not be kept: {error}")
        finally:
            os.close(made)
            with (
                contextlib.suppress(OSError),
                pin(self.base, self.base) as base,
                opened(base.folder(parts[:-1])) as parent,
            ):
                _remove(parts[-1], parent)


def _split(path: str) -> tuple[str, str]:
    """The entry's folder and its name there, quoted: archives hold names relative to that folder, so an entry of
    the home folder comes back where the next job's home is (the sandbox's differs from job to job)."""
    folder, name = posixpath.split(path)
    return shlex.quote(folder or "/"), shlex.quote(name)


def _quietly(command: str, folder: str) -> str:
    """``command`` as the job's shell runs it from ``folder`` (made if missing) in a subshell: its output and
    tracing kept out of the log, its failure ending nothing (``set -e``), the shell's ``set -x`` as it was after."""
    return (
        "{ __conveyor_x=$-; set +x; } 2>/dev/null; "
        f"( mkdir -p -- {folder} && cd -- {folder} && {command} ) </dev/null >/dev/null 2>&1 || :; "
        "case $__conveyor_x in *x*) unset __conveyor_x; set -x ;; *) unset __conveyor_x ;; esac"
    )


def _small_file(folder: Pinned, name: str) -> str:
    """The first bytes of a file the job wrote in the shared folder, opened by descriptor without following a link;
    "-" when there is no such file."""
    try:
        fd = folder.open_file(name, follow=False)
    except OSError:
        return "-"
    with opened(fd):
        return os.read(fd, 128).decode(errors="replace").strip()


def _remove(name: str, parent_fd: int) -> None:
    """Remove the shared folder, or a file or link the job put in its place (never followed)."""
    try:
        os.unlink(name, dir_fd=parent_fd)
    except IsADirectoryError:
        shutil.rmtree(name, dir_fd=parent_fd)  # by descriptors: a link inside is removed, never followed
    except FileNotFoundError:
        pass
