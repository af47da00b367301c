"""Reading a fetched commit: its message and signatures as a build reports them, and appveyor.yml from its tree."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from datetime import UTC, datetime

from dulwich.objects import Blob, Tree
from dulwich.objects import Commit as GitCommit
from dulwich.repo import BaseRepo

from chalicelib.scm.git_remote import Remote

_SERVICE_FILES = (b"appveyor.yml", b".appveyor.yml")


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


def commit_of(commit: GitCommit) -> Commit:
    """A fetched commit as a build reports it."""
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


def service_yml(repo: BaseRepo, commit: GitCommit, remote: Remote) -> str | None:
    """appveyor.yml in the commit's root, else .appveyor.yml, else None; its blob fetched if a fetch left it behind."""
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
