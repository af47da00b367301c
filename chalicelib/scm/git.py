"""What a build of a git repository builds, and checking that commit out, with dulwich: no git binary.

Starting a build resolves what it builds in memory from a depth-1 fetch without file contents (one commit, its trees)
and then the one file it needs, appveyor.yml, so it costs the same for any repository; a runner then checks that
exact commit out on disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dulwich.client import FetchPackResult
from dulwich.index import build_index_from_tree
from dulwich.objects import Commit as GitCommit
from dulwich.objects import ObjectID, Tag
from dulwich.refs import HEADREF, Ref
from dulwich.repo import BaseRepo, MemoryRepo, Repo

from chalicelib.scm import git_commits, git_remote
from chalicelib.scm.git_commits import Commit
from chalicelib.scm.git_remote import Credentials, SourceError
from chalicelib.scm.transport import SshAccess

_WHOLE_HISTORY = 2**31 - 1  # what `git fetch --unshallow` asks for: deepening a shallow repository needs a depth
# a commit asked for by id is usually the head, else recent: the whole branch is fetched only when it is neither
_DEEPER = (50, _WHOLE_HISTORY)
_HEX = re.compile(r"^[0-9a-f]{4,40}$")
_PULL_NUMBER = re.compile(r"^refs/(?:pull|merge-requests|pull-requests)/(\d+)/")


class RevisionNotFound(SourceError):
    """The branch, commit or pull request named does not exist in the repository; str() says which."""


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
    with git_remote.connect(url, timeout, checked=True, credentials=credentials, ssh=ssh) as remote:
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
        service_yml = git_commits.service_yml(repo, commit, remote)
    ref = f"refs/heads/{branch}" if fetch_ref == "HEAD" else fetch_ref
    pull_head = commit.id.decode() if pull_ref and _PULL_NUMBER.match(pull_ref) else None
    return Revision(
        commit=git_commits.commit_of(commit), branch=branch, ref=ref, service_yml=service_yml, pull_head=pull_head
    )


def _merge_revision(
    remote: git_remote.Remote, url: str, branch: str | None, commit_id: str | None, pull_ref: str, merge_ref: str
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
    service_yml = git_commits.service_yml(repo, commit, remote)
    if head not in repo.object_store:
        remote.fetch_object(repo, head)  # its message and author: what filters and the title read
    head_commit = repo[head]
    branch = branch or _default_branch(fetched, url)
    pushed = git_commits.commit_of(head_commit) if isinstance(head_commit, GitCommit) else None
    return Revision(
        commit=git_commits.commit_of(commit),
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
        with git_remote.connect(url, timeout, credentials=credentials, ssh=ssh) as remote:
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


def _head_of(fetched: FetchPackResult, ref: str, url: str) -> str:
    head = fetched.refs.get(Ref(ref.encode()))
    if head:
        return head.decode()
    if ref.startswith("refs/heads/"):
        raise RevisionNotFound(f"Branch '{ref.removeprefix('refs/heads/')}' not found in the repository.")
    if ref == "HEAD":
        raise RevisionNotFound(f"The repository {git_remote.public_url(url)} has no commits on its default branch.")
    raise RevisionNotFound(f"{_pull_label(ref).capitalize()} not found in the repository.")


def _default_branch(fetched: FetchPackResult, url: str) -> str:
    """The branch HEAD names; from a server that names none, git clone's guess: a branch at HEAD's commit."""
    target = fetched.symrefs.get(HEADREF)
    if target:
        return target.decode().removeprefix("refs/heads/")
    head = fetched.refs.get(HEADREF)
    at_head = [name.decode() for name, sha in fetched.refs.items() if name.startswith(b"refs/heads/") and sha == head]
    if not at_head:
        raise SourceError(f"Cannot read the repository {git_remote.public_url(url)}: its HEAD names no branch.")
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
