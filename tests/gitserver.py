"""A git smart-HTTP server on loopback and a factory for the repositories it serves, both pure dulwich.

Tests build real repositories with `Repository` (no git binary: CI may not have one) under a root directory,
and `GitServer` serves every repository below that root, so a test clones exactly what a user's build would.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from socketserver import ThreadingMixIn
from types import TracebackType
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from dulwich.errors import NotGitRepository
from dulwich.index import commit_tree
from dulwich.objects import Blob, Commit, ObjectID
from dulwich.refs import HEADREF, Ref
from dulwich.repo import Repo
from dulwich.server import Backend, BackendRepo
from dulwich.web import make_wsgi_chain

_FILE_MODE = 0o100644
_EXECUTABLE_MODE = 0o100755


class _RepositoriesUnder(Backend):
    """Every repository below a root directory, by its path there.

    dulwich's FileSystemBackend joins the request path ("/name.git", absolute) onto its root, which discards the
    root, so it serves nothing; this backend strips the slash. Each request opens the repository afresh, so commits
    made between requests are served.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def open_repository(self, path: str | bytes) -> BackendRepo:
        relative = (os.fsdecode(path) if isinstance(path, bytes) else path).strip("/")
        location = (self.root / relative).resolve()
        if not relative or not location.is_relative_to(self.root) or not location.is_dir():
            raise NotGitRepository(f"No repository at {relative!r}")
        return Repo(str(location))


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a client that hangs up mid-request must not keep the test process alive
    request_queue_size = 128  # fifty builds started at once clone at once: the default backlog of 5 resets some


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Requests are not logged: test output stays readable."""

    def get_environ(self) -> dict[str, Any]:
        """The environ, with the path as sent (PATH_INFO is decoded: GitLab's %2F would read as a slash)."""
        environ = super().get_environ()
        environ["RAW_URI"] = self.path
        return environ


class GitServer:
    """Serves every repository under `root` over git smart HTTP at 127.0.0.1 on a free port."""

    def __init__(self, root: Path, credentials: tuple[str, str] | None = None) -> None:
        self.root = Path(root)
        self.credentials = credentials  # a private server: every request must carry them as Basic auth
        self.authorizations: list[str] = []  # the Authorization header of every request, "" when it had none
        self._server: _ThreadingWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def _guarded(self, app: Any) -> Any:
        def serve(environ: dict[str, Any], start_response: Any) -> Any:
            sent = environ.get("HTTP_AUTHORIZATION", "")
            self.authorizations.append(sent)
            if self.credentials is not None:
                expected = "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()
                if sent != expected:
                    start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="git"')])
                    return [b"authentication required"]
            return app(environ, start_response)

        return serve

    def start(self) -> GitServer:
        """Start serving in a daemon thread; returns the server."""
        app = self._guarded(make_wsgi_chain(_RepositoriesUnder(self.root)))
        self._server = make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="git-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server, self._thread = None, None

    @property
    def url(self) -> str:
        """The server's base URL, without a trailing slash."""
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url_of(self, name: str) -> str:
        """The clone URL of the repository `name` (its path under the root)."""
        return f"{self.url}/{name.strip('/')}"

    def __enter__(self) -> GitServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


class Repository:
    """A bare repository whose commits are written from complete file trees, for deterministic tests."""

    def __init__(self, path: Path, default_branch: str = "master") -> None:
        self._path = Path(path)
        self.default_branch = default_branch

    @classmethod
    def create(cls, root: Path, name: str, default_branch: str = "master") -> Repository:
        """A new, empty bare repository `root/name` whose HEAD names `default_branch`."""
        path = Path(root) / name
        path.mkdir(parents=True)
        Repo.init_bare(str(path), default_branch=default_branch.encode()).close()
        return cls(path, default_branch)

    @property
    def path(self) -> Path:
        """Where the repository is on disk (also a valid local clone URL)."""
        return self._path

    def commit(
        self,
        files: dict[str, str | bytes],
        message: str = "A change",
        branch: str | None = None,
        author: str = "Ada Lovelace <ada@example.com>",
        executable: Iterable[str] = frozenset(),
        parent_from: str | None = None,
        committed: datetime | None = None,
        merged: str | None = None,
    ) -> str:
        """Commit `files` (the whole tree) on `branch` (default branch when None); returns the commit's sha.

        The parent is `parent_from` (a branch, full ref or sha) when given, else the branch's head, else the default
        branch's head, so a new branch forks from it as `git checkout -b` would; `merged` (a sha) is a second
        parent, as in a merge commit. `committed` defaults to now.
        """
        executable = set(executable)
        ref = Ref(f"refs/heads/{branch or self.default_branch}".encode())
        with Repo(str(self._path)) as repo:
            entries = []
            for name, content in sorted(files.items()):
                blob = Blob.from_string(content.encode() if isinstance(content, str) else content)
                repo.object_store.add_object(blob)
                mode = _EXECUTABLE_MODE if name in executable else _FILE_MODE
                entries.append((name.encode(), blob.id, mode))
            new = Commit()
            new.tree = commit_tree(repo.object_store, entries)
            new.parents = self._parents(repo, ref, parent_from) + ([ObjectID(merged.encode())] if merged else [])
            new.author = new.committer = author.encode()
            when = committed or datetime.now(UTC)
            offset = when.utcoffset()
            new.author_time = new.commit_time = int(when.timestamp())
            new.author_timezone = new.commit_timezone = int(offset.total_seconds()) if offset else 0
            new.message = message.encode() if message.endswith("\n") else f"{message}\n".encode()
            repo.object_store.add_object(new)
            repo.refs[ref] = new.id
            return new.id.decode()

    def set_ref(self, ref: str, sha: str) -> None:
        """Point the full ref `ref` (e.g. "refs/pull/7/head") at commit `sha`."""
        with Repo(str(self._path)) as repo:
            repo.refs[Ref(ref.encode())] = ObjectID(sha.encode())

    def branch(self, name: str, sha: str) -> None:
        """Point branch `name` at commit `sha`."""
        self.set_ref(f"refs/heads/{name}", sha)

    def head(self, branch: str | None = None) -> str:
        """The sha at the head of `branch` (default branch when None)."""
        with Repo(str(self._path)) as repo:
            return repo.refs[Ref(f"refs/heads/{branch or self.default_branch}".encode())].decode()

    def detach_head(self, sha: str) -> None:
        """Make HEAD the commit `sha` rather than a branch, so the server reports no default branch."""
        with Repo(str(self._path)) as repo:
            del repo.refs[HEADREF]  # drops the symref itself rather than the branch it names
            repo.refs[HEADREF] = ObjectID(sha.encode())

    def _parents(self, repo: Repo, ref: Ref, parent_from: str | None) -> list[ObjectID]:
        refs = repo.get_refs()
        if parent_from is not None:
            for candidate in (Ref(f"refs/heads/{parent_from}".encode()), Ref(parent_from.encode())):
                if candidate in refs:
                    return [refs[candidate]]
            return [ObjectID(parent_from.encode())]  # a sha
        default = Ref(f"refs/heads/{self.default_branch}".encode())
        for candidate in (ref, default):
            if candidate in refs:
                return [refs[candidate]]
        return []
