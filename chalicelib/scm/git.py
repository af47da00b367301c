"""Git repositories over http(s)://, git://, ssh:// (scm/ssh.py) and local paths, with dulwich: no git binary.

Starting a build resolves what it builds in memory from a depth-1 fetch without file contents (one commit, its trees)
and then the one file it needs, appveyor.yml, so it costs the same for any repository; a runner then checks that
exact commit out on disk.
"""

from __future__ import annotations

import os
import re
import socket
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlparse, urlsplit, urlunsplit

from dulwich.client import (
    FetchPackResult,
    GitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    SSHGitClient,
    get_transport_and_path,
)
from dulwich.errors import NotGitRepository
from dulwich.index import build_index_from_tree
from dulwich.objects import Blob, ObjectID, Tag, Tree
from dulwich.objects import Commit as GitCommit
from dulwich.refs import HEADREF, Ref
from dulwich.repo import BaseRepo, MemoryRepo, Repo
from urllib3 import exceptions as http_errors

from chalicelib import outbound
from chalicelib.scm import transport
from chalicelib.scm.transport import HostKeyRefused, SshAccess

_WHOLE_HISTORY = 2**31 - 1  # what `git fetch --unshallow` asks for: deepening a shallow repository needs a depth
# a commit asked for by id is usually the head, else recent: the whole branch is fetched only when it is neither
_DEEPER = (50, _WHOLE_HISTORY)
_SERVICE_FILES = (b"appveyor.yml", b".appveyor.yml")
_HEX = re.compile(r"^[0-9a-f]{4,40}$")
_PULL_NUMBER = re.compile(r"^refs/(?:pull|merge-requests|pull-requests)/(\d+)/")
_SCHEMES = {"http", "https", "git", "ssh", "file"}
_CONVEYOR_FOLDER = Path(__file__).resolve().parents[2]  # where a local stack's user may keep repositories
Credentials = tuple[str, str] | None  # a user name and a password (a token, usually), for HTTP(S) remotes


class SourceError(Exception):
    """The repository cannot be read (unreachable, not a git repository, protocol error); str() is for the user."""


class RevisionNotFound(SourceError):
    """The branch, commit or pull request named does not exist in the repository; str() says which."""


@dataclass(frozen=True)
class Commit:
    """A commit as a build reports it."""

    sha: str  # full 40-hex id
    message: str  # the title: first line of the message
    message_extended: str | None  # the rest of the message after the title, stripped; None if empty
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str
    committed: datetime  # commit time, in UTC


@dataclass(frozen=True)
class Revision:
    """What a build builds: a commit, where it was found, and its build configuration."""

    commit: Commit
    branch: str  # the branch built; for a pull request, the branch asked for, else the default branch
    ref: str  # the full ref fetched: "refs/heads/master", "refs/pull/7/head", "refs/pull/7/merge"
    service_yml: str | None  # appveyor.yml in the commit's root, else .appveyor.yml, else None
    pull_head: str | None = None  # a pull request's head commit (its merge commit is the one built, when there is one)
    head_commit: Commit | None = None  # that head, where it is not the commit built: what the developer wrote

    @property
    def pushed(self) -> Commit:
        """The commit the developer pushed: a pull request's head, else the commit built (what commit filters,
        [skip ci] included, and a pull request's default title read; never the forge's merge commit)."""
        return self.head_commit or self.commit


def resolve(
    url: str,
    *,
    branch: str | None = None,
    commit_id: str | None = None,
    pull_ref: str | None = None,
    merge_ref: str | None = None,
    timeout: float = 20.0,
    credentials: Credentials = None,
    ssh: SshAccess | None = None,
) -> Revision:
    """What a build of this repository would build (``credentials``: user name and password, for HTTP(S)).

    ``merge_ref``: a pull request's merge with its target branch, as the forge keeps it (GitHub's
    refs/pull/N/merge): built instead of ``pull_ref``, the head, when it exists and merges that head (the one
    ``commit_id`` names, when given); a pull request that does not merge cleanly has none, and its head is built.
    """
    fetch_ref = pull_ref or (f"refs/heads/{branch}" if branch else "HEAD")
    # HEAD names the default branch, or the branches do when a server reports no symref; a build of a named branch
    # needs one ref listed, however many the server has (GitHub's refs/pull/* run to thousands)
    wanted_refs = list(dict.fromkeys([fetch_ref] if branch else [fetch_ref, "HEAD", "refs/heads/"]))
    repo = MemoryRepo()
    with _remote(url, timeout, checked=True, credentials=credentials, ssh=ssh) as remote:
        if merge_ref and pull_ref:  # on the same connection: a pull request without a usable merge costs no other
            merged = _merge_revision(remote, url, branch, commit_id, pull_ref, merge_ref)
            if merged is not None:
                return merged
        fetched = remote.fetch_ref(repo, fetch_ref, 1, wanted_refs, blobs=False)
        head = _head_of(fetched, fetch_ref, url)
        branch = branch or _default_branch(fetched, url)
        on = _pull_label(pull_ref) if pull_ref else f"branch '{branch}'"
        sha = _find_commit(repo, commit_id, on) if commit_id else head
        for depth in _DEEPER if commit_id else ():
            if sha is not None or not repo.get_shallow():  # found, or the whole history is here already
                break
            remote.fetch_ref(repo, fetch_ref, depth, wanted_refs, blobs=False)
            sha = _find_commit(repo, commit_id or "", on)
        if sha is None:
            raise RevisionNotFound(f"Commit '{commit_id}' not found on {on}.")
        commit = repo[ObjectID(sha.encode())]
        while isinstance(commit, Tag):  # an annotated tag names its commit
            commit = repo[commit.object[1]]
        assert isinstance(commit, GitCommit)
        service_yml = _service_yml(repo, commit, remote)
    ref = f"refs/heads/{branch}" if fetch_ref == "HEAD" else fetch_ref
    pull_head = commit.id.decode() if pull_ref and _PULL_NUMBER.match(pull_ref) else None
    return Revision(commit=_commit(commit), branch=branch, ref=ref, service_yml=service_yml, pull_head=pull_head)


def _merge_revision(
    remote: _Remote, url: str, branch: str | None, commit_id: str | None, pull_ref: str, merge_ref: str
) -> Revision | None:
    """The pull request's merge commit as a Revision, when the forge has one of its head; else None."""
    repo = MemoryRepo()  # its own: what resolve fetches next, if not this, starts from nothing fetched here
    listed = [merge_ref, pull_ref] if branch else [merge_ref, pull_ref, "HEAD", "refs/heads/"]
    fetched = remote.fetch_ref(repo, merge_ref, 1, listed, blobs=False)
    merge, head = fetched.refs.get(Ref(merge_ref.encode())), fetched.refs.get(Ref(pull_ref.encode()))
    if not merge or not head or (commit_id and not head.decode().startswith(commit_id.strip().lower())):
        return None  # no merge (a conflict), or the head moved on from the commit asked for: build that one
    commit = repo[merge]
    if not isinstance(commit, GitCommit) or head not in commit.parents:
        return None  # a merge the forge has not made again since the head moved
    service_yml = _service_yml(repo, commit, remote)
    if head not in repo.object_store:
        remote.fetch_object(repo, head)  # its message and author: what filters and the title read
    head_commit = repo[head]
    branch = branch or _default_branch(fetched, url)
    pushed = _commit(head_commit) if isinstance(head_commit, GitCommit) else None
    return Revision(
        commit=_commit(commit),
        branch=branch,
        ref=merge_ref,
        service_yml=service_yml,
        pull_head=head.decode(),
        head_commit=pushed,
    )


def checkout(
    url: str,
    revision_ref: str,
    sha: str,
    folder: Path,
    depth: int | None = None,
    timeout: float = 300.0,
    credentials: Credentials = None,
    ssh: SshAccess | None = None,
) -> None:
    """Make `folder` (existing, empty) a git working tree of commit `sha`, fetched from `revision_ref`."""
    missing = RevisionNotFound(f"Commit '{sha}' not found on '{revision_ref}'.")
    if not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise missing
    commit_id = ObjectID(sha.encode())
    with Repo.init(str(folder)) as repo:
        with _remote(url, timeout, credentials=credentials, ssh=ssh) as remote:
            fetched = remote.fetch_ref(repo, revision_ref, depth, [revision_ref])
            _head_of(fetched, revision_ref, url)  # raises when the ref is gone
            if commit_id not in repo.object_store and repo.get_shallow():
                # the ref moved on past `depth` commits since the build started
                remote.fetch_ref(repo, revision_ref, _WHOLE_HISTORY, [revision_ref])
        commit = repo[commit_id] if commit_id in repo.object_store else None
        if not isinstance(commit, GitCommit):
            raise missing
        build_index_from_tree(repo.path, repo.index_path(), repo.object_store, commit.tree, honor_filemode=True)
        # a detached HEAD, as a CI checkout of one commit is: `del` drops the symref rather than following it
        del repo.refs[HEADREF]
        repo.refs[HEADREF] = commit.id


@dataclass(frozen=True)
class _Remote:
    """One repository's remote end, as dulwich reaches it."""

    client: GitClient
    path: str

    def fetch_ref(
        self, repo: BaseRepo, ref: str, depth: int | None, listed: Sequence[str], blobs: bool = True
    ) -> FetchPackResult:
        """Fetch the head of `ref` (nothing when there is no such ref), listing only the refs `listed` start.

        Without `blobs`, file contents stay behind where the server can filter them (protocol v2 partial clone, as
        GitHub, GitLab and git itself serve): commits and trees only. Other servers send them all the same.
        """

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            head = refs.get(Ref(ref.encode()))
            return [head] if head else []

        return self.client.fetch(
            self.path,
            repo,
            determine_wants=wants,
            depth=depth,
            ref_prefix=[name.encode() for name in listed],
            filter_spec=None if blobs else b"blob:none",
        )

    def fetch_object(self, repo: BaseRepo, object_id: ObjectID) -> None:
        """Fetch one object a filtered fetch left behind: protocol v2 servers give any object by its id."""
        self.client.fetch(
            self.path, repo, determine_wants=lambda refs, depth=None: [object_id], depth=1, ref_prefix=[b"HEAD"]
        )


@contextmanager
def _remote(
    url: str, timeout: float, checked: bool = False, credentials: Credentials = None, ssh: SshAccess | None = None
) -> Iterator[_Remote]:
    """Fetching from `url`: whatever reading it raises becomes one SourceError; its connections close after.

    ``checked``: the service fetches for a user, from its own network: only addresses chalicelib.outbound allows.
    A runner fetches unchecked: it runs in the build's sandbox, which reaches what the build reaches anyway.
    """
    scheme = urlsplit(url).scheme
    if scheme not in _SCHEMES and not (scheme == "" and url.startswith("/")):
        raise SourceError(
            f"Cannot read the repository {_public(url)}: "
            "only http(s)://, git://, ssh:// and local repositories are supported."
        )
    manager = transport.http_manager(_public(url), timeout, checked) if scheme in ("http", "https") else None
    if scheme == "git" and checked:
        try:
            url = transport.pinned_git_url(url)
        except outbound.Refused as error:
            raise SourceError(f"Cannot read the repository {_public(url)}: {error}") from None
    client: GitClient
    if scheme == "ssh":
        if ssh is None:
            raise SourceError(f"Cannot read the repository {_public(url)}: ssh:// needs the project's deploy key.")
        from chalicelib.scm.ssh import ParamikoVendor  # paramiko loads only where a fetch goes over SSH

        parsed = urlparse(url)
        client, path = SSHGitClient.from_parsedurl(parsed, vendor=ParamikoVendor(ssh, checked)), parsed.path
    else:
        username, password = credentials or (None, None)
        # given apart from the URL: dulwich sends them as Basic auth to the URL's origin only, never to a redirect's
        client, path = get_transport_and_path(url, pool_manager=manager, username=username, password=password)
    try:
        yield _Remote(client, path)
    except SourceError:
        raise
    except Exception as error:
        # dulwich reports a failed read with many exception types (its own, urllib3's, OSError, ValueError from a
        # server that is not a git server): each is the user's "cannot read", with the reason they can act on
        raise SourceError(f"Cannot read the repository {_public(url)}: {_reason(error, url, timeout)}.") from error
    finally:
        if manager is not None:
            manager.clear()


def _head_of(fetched: FetchPackResult, ref: str, url: str) -> str:
    head = fetched.refs.get(Ref(ref.encode()))
    if head:
        return head.decode()
    if ref.startswith("refs/heads/"):
        raise RevisionNotFound(f"Branch '{ref.removeprefix('refs/heads/')}' not found in the repository.")
    if ref == "HEAD":
        raise RevisionNotFound(f"The repository {_public(url)} has no commits on its default branch.")
    raise RevisionNotFound(f"{_pull_label(ref).capitalize()} not found in the repository.")


def _default_branch(fetched: FetchPackResult, url: str) -> str:
    """The branch HEAD names; from a server that names none, git clone's guess: a branch at HEAD's commit."""
    target = fetched.symrefs.get(HEADREF)
    if target:
        return target.decode().removeprefix("refs/heads/")
    head = fetched.refs.get(HEADREF)
    at_head = [name.decode() for name, sha in fetched.refs.items() if name.startswith(b"refs/heads/") and sha == head]
    if not at_head:
        raise SourceError(f"Cannot read the repository {_public(url)}: its HEAD names no branch.")
    at_head.sort(key=lambda name: (name not in ("refs/heads/master", "refs/heads/main"), name))
    return at_head[0].removeprefix("refs/heads/")


def _pull_label(ref: str) -> str:
    number = _PULL_NUMBER.match(ref)
    return f"pull request #{number.group(1)}" if number else f"ref '{ref}'"


def _find_commit(repo: BaseRepo, commit_id: str, on: str) -> str | None:
    """The commit fetched whose id starts with `commit_id`: everything fetched is history of the ref built."""
    prefix = commit_id.strip().lower()
    if not _HEX.match(prefix):
        raise RevisionNotFound(f"Commit '{commit_id}' not found on {on}.")
    matches = [sha for sha in repo.object_store if sha.decode().startswith(prefix)]
    commits = [sha.decode() for sha in matches if isinstance(repo.object_store[sha], GitCommit)]
    if len(commits) > 1:
        raise RevisionNotFound(f"Commit '{commit_id}' is ambiguous on {on}: give more of its id.")
    return commits[0] if commits else None


def _commit(commit: GitCommit) -> Commit:
    try:
        text = commit.message.decode((commit.encoding or b"utf-8").decode("ascii", "replace"), errors="replace")
    except LookupError:  # an encoding header Python does not know
        text = commit.message.decode("utf-8", errors="replace")
    title, _, rest = text.strip("\n").partition("\n")
    author_name, author_email = _identity(commit.author)
    committer_name, committer_email = _identity(commit.committer)
    return Commit(
        sha=commit.id.decode(),
        message=title.strip(),
        message_extended=rest.strip() or None,
        author_name=author_name,
        author_email=author_email,
        committer_name=committer_name,
        committer_email=committer_email,
        committed=datetime.fromtimestamp(commit.commit_time, tz=UTC),
    )


def _identity(raw: bytes) -> tuple[str, str]:
    """Name and email of a "Name <email>" signature."""
    name, bracket, email = raw.decode("utf-8", errors="replace").rpartition("<")
    if not bracket:
        return email.strip(), ""
    return name.strip(), email.rstrip().removesuffix(">")


def _service_yml(repo: BaseRepo, commit: GitCommit, remote: _Remote) -> str | None:
    tree = repo[commit.tree]
    assert isinstance(tree, Tree)
    for name in _SERVICE_FILES:
        try:
            mode, sha = tree[name]
        except KeyError:
            continue
        if not stat.S_ISREG(mode):
            continue
        if sha not in repo.object_store:
            remote.fetch_object(repo, sha)  # filtered out: the one blob a build needs before it runs
        blob = repo[sha]
        if isinstance(blob, Blob):
            return blob.data.decode("utf-8", errors="replace")
    return None


def _unseen(url: str) -> str | None:
    """Why a local repository cannot be read where it is named, when nothing there can be read at all: a build's
    sandbox (runner/sandbox.py) empties /tmp, /var/tmp, /dev/shm and the home folder and runs as nobody, so a
    repository the user made there is not where the build looks."""
    parsed = urlsplit(url)
    if parsed.scheme not in ("", "file"):
        return None
    path = unquote(parsed.path)
    if os.access(path, os.R_OK | os.X_OK):
        return None
    return (
        f"nothing at {path} can be read from here: a build runs in a sandbox, as the user nobody, which does not "
        "see /tmp, /var/tmp, /dev/shm or home folders; put the repository in a folder every user may read outside "
        f"those, such as out/ inside the Conveyor folder ({_CONVEYOR_FOLDER / 'out'}, ignored by git)"
    )


def _reason(error: Exception, url: str, timeout: float) -> str:
    chain = _causes(error)
    refusal = next((e for e in chain if isinstance(e, outbound.Refused | HostKeyRefused)), None)
    if refusal is not None:
        return str(refusal).rstrip(".")
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if any(isinstance(e, http_errors.NameResolutionError | socket.gaierror) for e in chain):
        return "host not found"
    if any(_timed_out(e) for e in chain):
        return f"no answer within {timeout:g} seconds"
    if isinstance(error, NotGitRepository):
        return _unseen(url) or "not found, or not a git repository"
    if isinstance(error, HTTPUnauthorized | HTTPProxyUnauthorized):
        return "authentication failed"
    status = re.search(r"unexpected http resp (\d+)", str(error))
    if status:
        return f"the server answered HTTP {status.group(1)}"
    if isinstance(error, ValueError | AssertionError | KeyError):
        return "the server did not answer as a git repository"
    detail = _scrub(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__, url)
    return detail[:200].rstrip(".")


def _causes(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        reason = getattr(current, "reason", None)  # urllib3's MaxRetryError keeps the error it gave up on here
        current = reason if isinstance(reason, BaseException) else current.__cause__ or current.__context__
    return chain


def _timed_out(error: BaseException) -> bool:
    if isinstance(error, http_errors.NewConnectionError):  # a subclass of ConnectTimeoutError, whatever its cause
        return False
    return isinstance(error, TimeoutError | http_errors.TimeoutError)


def _public(url: str) -> str:
    """`url` without the credentials it may carry (https://user:token@host/...)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _scrub(text: str, url: str) -> str:
    """`text` without the URL's secret, in case an error message quotes it."""
    parts = urlsplit(url)
    secret = parts.password or parts.username  # a token may be given as the user: https://TOKEN@host/...
    for spelling in {secret, unquote(secret)} if secret else ():
        text = text.replace(spelling, "***")
    return text
