"""Reading a fetched commit: its title apart from the rest of its message, its signatures, and appveyor.yml (else
.appveyor.yml) from its tree. Commits made in memory, no fetch."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from unittest.mock import create_autospec

from dulwich.client import GitClient
from dulwich.objects import Blob, Tree
from dulwich.objects import Commit as GitCommit
from dulwich.repo import MemoryRepo

from chalicelib.scm.git_commits import commit_of, service_yml
from chalicelib.scm.git_remote import Remote

WHEN = int(datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp())


def _commit(repo: MemoryRepo, files: dict[bytes, tuple[int, bytes]], message: bytes, author: bytes) -> GitCommit:
    tree = Tree()
    for name, (mode, data) in files.items():
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        tree.add(name, mode, blob.id)
    repo.object_store.add_object(tree)
    commit = GitCommit()
    commit.tree, commit.message, commit.author, commit.committer = tree.id, message, author, b"Bot <bot@example.com>"
    commit.author_time = commit.commit_time = WHEN
    commit.author_timezone = commit.commit_timezone = 0
    repo.object_store.add_object(commit)
    return commit


def _remote() -> Remote:
    return Remote(create_autospec(GitClient, instance=True), "/acme/app.git")


def test_a_commit_reports_its_title_the_rest_of_its_message_and_who_wrote_it() -> None:
    commit = _commit(MemoryRepo(), {}, b"Fix the build\n\nIt broke.\n", b"Ada Lovelace <ada@example.com>")

    read = commit_of(commit)

    assert (read.sha, read.message, read.message_extended) == (commit.id.decode(), "Fix the build", "It broke.")
    assert (read.author_name, read.author_email) == ("Ada Lovelace", "ada@example.com")
    assert (read.committer_name, read.committer_email) == ("Bot", "bot@example.com")
    assert read.committed == datetime(2024, 5, 1, 12, tzinfo=UTC)


def test_a_one_line_message_has_no_extended_message_and_a_signature_without_email_is_all_name() -> None:
    read = commit_of(_commit(MemoryRepo(), {}, b"Just a title\n", b"nobody"))

    assert (read.message, read.message_extended) == ("Just a title", None)
    assert (read.author_name, read.author_email) == ("nobody", "")


def test_appveyor_yml_is_read_before_the_dotted_one_and_a_link_by_that_name_is_not_read() -> None:
    repo = MemoryRepo()
    both = _commit(
        repo,
        {b"appveyor.yml": (0o100644, b"build: off\n"), b".appveyor.yml": (0o100644, b"test: off\n")},
        b"both",
        b"A <a@example.com>",
    )
    linked = _commit(
        repo,
        {b"appveyor.yml": (stat.S_IFLNK, b"/etc/passwd"), b".appveyor.yml": (0o100644, b"test: off\n")},
        b"a link",
        b"A <a@example.com>",
    )
    neither = _commit(repo, {b"README.md": (0o100644, b"hello\n")}, b"none", b"A <a@example.com>")
    remote = _remote()

    assert service_yml(repo, both, remote) == "build: off\n"
    assert service_yml(repo, linked, remote) == "test: off\n"
    assert service_yml(repo, neither, remote) is None
    remote.client.fetch.assert_not_called()  # every blob was here already
