"""A checkout's working tree as one git commit, in memory: what ``conveyor exec`` builds, uncommitted changes and all.

What goes in is every tracked file as it is on disk (deleted ones left out) and, only when asked (``--untracked``),
every untracked file git does not ignore, as ``git add --all`` would stage them. Untracked files stay out unless
asked for because the checkout decides what git ignores: a pull request's ``.gitignore`` that un-ignores ``.env``
would otherwise hand the user's own keys to its build. Ignored files stay out (``.venv``, ``node_modules``, build
output), as they would be on a fresh clone; so does ``.conveyor/exec/``, where exec keeps its artifacts. A
submodule stays the commit its gitlink names, as the service's checkout leaves it; a nested repository git does not
track is left out. A clean tree is HEAD itself; otherwise the commit is new, its parent HEAD, its message saying so.

Objects already in the checkout's repository are read from there; only changed files become new objects, kept in
memory (nothing is written to the checkout's ``.git``).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dulwich.ignore import IgnoreFilterManager
from dulwich.index import IndexEntry, blob_from_path_and_stat, commit_tree
from dulwich.object_store import MemoryObjectStore, OverlayObjectStore
from dulwich.objects import S_IFGITLINK, Commit, ObjectID, RawObjectID
from dulwich.pack import UnpackedObject
from dulwich.refs import HEADREF, Ref
from dulwich.repo import MemoryRepo, Repo

STATE_FOLDER = ".conveyor/exec"  # exec's own files in the checkout (artifacts, cache): never part of the snapshot


class _Overlay(OverlayObjectStore):
    """dulwich's overlay, each store handed its own copy of what is still wanted: dulwich 1.2's removes each object
    found from the set a store is still reading ("Set changed size during iteration")."""

    def iter_unpacked_subset(
        self,
        shas: Iterable[ObjectID | RawObjectID],
        *,
        include_comp: bool = False,
        allow_missing: bool = False,
        convert_ofs_delta: bool = True,
    ) -> Iterator[UnpackedObject]:
        """Each wanted object from the first store that has it."""
        wanted = set(shas)
        for store in self.bases:
            for found in store.iter_unpacked_subset(
                set(wanted), include_comp=include_comp, allow_missing=True, convert_ofs_delta=convert_ofs_delta
            ):
                wanted.discard(found.sha())
                yield found
        if wanted and not allow_missing:
            raise KeyError(next(iter(wanted)))


class NotACheckout(Exception):
    """The folder is not a git working tree; the message says what to do."""


@dataclass(frozen=True)
class Snapshot:
    """The commit built, the repository that serves it, and what the build's variables say of it."""

    repository: MemoryRepo  # the new objects over the checkout's: served to the job's runner
    commit_id: str
    ref: str  # refs/heads/<branch>
    branch: str
    head: Commit | None  # the checkout's HEAD commit (None in a repository with no commit yet)
    dirty: bool  # the snapshot differs from HEAD (uncommitted changes, untracked files taken)
    commit: Commit
    untracked: tuple[str, ...] = ()  # the untracked files git does not ignore, taken or not
    origin: str | None = None  # the URL of the checkout's remote "origin", if it has one
    checkout: Repo | None = None  # whose objects are served: open until close()

    def close(self) -> None:
        """Close the checkout's repository (its pack files) once nothing is fetched any more."""
        if self.checkout is not None:
            self.checkout.close()


def take(root: Path, branch: str | None = None, untracked: bool = False) -> Snapshot:
    """The working tree of the checkout at ``root`` as a commit on ``branch`` (default: the branch checked out), its
    untracked files git does not ignore taken only when ``untracked``."""
    try:
        checkout = Repo(str(root))
    except Exception as error:  # dulwich raises NotGitRepository, or OSError for an unreadable folder
        raise NotACheckout(f"{root} is not a git checkout: run conveyor exec in a git repository's folder.") from error
    try:
        return _snapshot(checkout, root, branch or current_branch(checkout), untracked)
    except BaseException:
        checkout.close()
        raise


def _snapshot(checkout: Repo, root: Path, branch: str | None, take_untracked: bool) -> Snapshot:
    if not branch:
        raise NotACheckout("HEAD is detached: name the branch the build is of with --branch NAME.")
    new_objects = MemoryObjectStore()
    store = _Overlay([new_objects, checkout.object_store], add_store=new_objects)
    untracked: list[str] = []
    entries = _entries(checkout, root, new_objects, untracked, take_untracked)
    tree_id = commit_tree(store, entries)
    head = _head(checkout)
    if head is not None and head.tree == tree_id:
        commit, dirty = head, False
    else:
        commit, dirty = _new_commit(tree_id, head), True
        new_objects.add_object(commit)
    served = MemoryRepo()
    served.object_store = store  # type: ignore[assignment] # an overlay serves as any store does
    ref = f"refs/heads/{branch}"
    served.refs[Ref(ref.encode())] = commit.id
    served.refs.set_symbolic_ref(HEADREF, Ref(ref.encode()))
    shallow = checkout.get_shallow()
    if shallow:  # the checkout's own history stops there: the fetch must not look past it
        served.update_shallow(set(shallow), None)
    return Snapshot(
        served, commit.id.decode(), ref, branch, head, dirty, commit, tuple(sorted(untracked)), _origin(checkout),
        checkout,
    )  # fmt: skip


def _origin(checkout: Repo) -> str | None:
    try:
        return checkout.get_config().get((b"remote", b"origin"), b"url").decode(errors="replace")
    except KeyError:
        return None


def current_branch(checkout: Repo) -> str | None:
    """The branch checked out, None when HEAD is detached."""
    target = checkout.refs.get_symrefs().get(HEADREF)
    if target is None or not target.startswith(b"refs/heads/"):
        return None
    return target.removeprefix(b"refs/heads/").decode()


def _head(checkout: Repo) -> Commit | None:
    try:
        head = checkout[checkout.head()]
    except KeyError:  # no commit yet
        return None
    return head if isinstance(head, Commit) else None


def _entries(
    checkout: Repo, root: Path, new_objects: MemoryObjectStore, untracked: list[str], take_untracked: bool
) -> list[tuple[bytes, ObjectID, int]]:
    """(path, object id, mode) of every file the snapshot holds; each untracked file git does not ignore is added to
    ``untracked``, and is one of those files only when ``take_untracked``."""
    index = checkout.open_index()
    tracked = set(index)  # a file in a merge's conflict too: as it is on disk
    gitlinks = {
        path: entry.sha for path, entry in index.items() if isinstance(entry, IndexEntry) and entry.mode == S_IFGITLINK
    }
    tracked_folders = {os.path.dirname(path) for path in tracked}
    tracked_folders |= {folder for path in tracked_folders for folder in _parents(path)}
    ignored = IgnoreFilterManager.from_repo(checkout)
    entries: list[tuple[bytes, ObjectID, int]] = []
    for folder, folders, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        prefix: str = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        kept_folders = []
        files += [name for name in folders if os.path.islink(os.path.join(folder, name))]  # kept as links
        for name in [name for name in folders if not os.path.islink(os.path.join(folder, name))]:
            folder_path = os.fsencode(prefix + name)
            if name == ".git" or prefix + name == STATE_FOLDER or folder_path in gitlinks:
                continue  # a submodule's folder is added below, as its gitlink
            if folder_path in tracked_folders or not ignored.is_ignored(prefix + name + "/"):
                if folder_path not in tracked_folders and os.path.exists(os.path.join(folder, name, ".git")):
                    continue  # a repository of its own that git does not track
                kept_folders.append(name)
        folders[:] = kept_folders
        for name in files:
            path = os.fsencode(prefix + name)
            if name == ".git" or path in gitlinks or (path not in tracked and ignored.is_ignored(prefix + name)):
                continue
            if path not in tracked:
                untracked.append(prefix + name)
                if not take_untracked:
                    continue
            full = os.path.join(folder, name)
            info = os.lstat(full)
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                continue  # a socket or a pipe: git keeps neither
            blob = blob_from_path_and_stat(os.fsencode(full), info)
            if blob.id not in checkout.object_store:
                new_objects.add_object(blob)
            entries.append((path, blob.id, _mode(info)))
    entries += [(path, sha, S_IFGITLINK) for path, sha in gitlinks.items()]
    return entries


def _parents(path: bytes) -> list[bytes]:
    found = []
    while path:
        path = os.path.dirname(path)
        if path:
            found.append(path)
    return found


def _mode(info: os.stat_result) -> int:
    if stat.S_ISLNK(info.st_mode):
        return stat.S_IFLNK
    return 0o100755 if info.st_mode & 0o100 else 0o100644


def _new_commit(tree_id: ObjectID, head: Commit | None) -> Commit:
    commit = Commit()
    commit.tree = tree_id
    commit.parents = [head.id] if head is not None else []
    who = head.author if head is not None else b"conveyor exec <exec@localhost>"
    commit.author = commit.committer = who
    commit.author_time = commit.commit_time = int(time.time())
    commit.author_timezone = commit.commit_timezone = 0
    title = head.message.decode(errors="replace").splitlines()[0] if head is not None and head.message else ""
    commit.message = (
        "conveyor exec: the working tree, with changes not committed"
        + (f" (on top of: {title})" if title else "")
        + "\n"
    ).encode()
    return commit
