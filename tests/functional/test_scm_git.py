"""Resolving what a build builds and checking it out, against real repositories served over git smart HTTP."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from dulwich.objects import Blob
from dulwich.repo import MemoryRepo, Repo

from chalicelib.scm import git
from chalicelib.scm.git import RevisionNotFound, checkout, resolve
from chalicelib.scm.git_remote import SourceError
from tests.gitserver import GitServer, Repository

_names = itertools.count()


@pytest.fixture
def new_repository(git_server: GitServer) -> Callable[..., Repository]:
    """Makes empty repositories the server serves, each under a name of its own."""

    def make(default_branch: str = "master") -> Repository:
        return Repository.create(git_server.root, f"repo-{next(_names)}.git", default_branch)

    return make


@pytest.fixture
def repository(new_repository: Callable[..., Repository]) -> Repository:
    return new_repository()


def url(server: GitServer, repository: Repository) -> str:
    return server.url_of(repository.path.name)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def git_daemon(root: Path) -> Iterator[str]:
    """git's own server for the repositories under `root`, over git://; yields its base URL."""
    port = closed_port()
    daemon = subprocess.Popen(
        ["git", "daemon", f"--base-path={root}", "--export-all", "--listen=127.0.0.1", f"--port={port}", str(root)],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 5
        while daemon.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        if daemon.returncode is not None:
            pytest.skip("git daemon is not available")
        yield f"git://127.0.0.1:{port}"
    finally:
        daemon.terminate()
        daemon.wait(timeout=5)


def tree_of(folder: Path) -> dict[str, str]:
    """Every file of a working tree but .git, by relative path."""
    return {
        str(path.relative_to(folder)): path.read_text()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(folder).parts
    }


# resolve: which commit


def test_resolve_default_branch_head_reads_appveyor_yml(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"appveyor.yml": "version: 1.0.{build}\n"}, message="First")
    head = repository.commit(
        {"appveyor.yml": "version: 2.0.{build}\n"}, message="Second", author="Grace Hopper <grace@example.com>"
    )

    revision = resolve(url(git_server, repository))

    assert revision.commit.sha == head
    assert revision.branch == "master"
    assert revision.ref == "refs/heads/master"
    assert revision.service_yml == "version: 2.0.{build}\n"
    assert (revision.commit.author_name, revision.commit.author_email) == ("Grace Hopper", "grace@example.com")
    assert (revision.commit.committer_name, revision.commit.committer_email) == ("Grace Hopper", "grace@example.com")


def test_resolve_default_branch_named_main(git_server: GitServer, new_repository: Callable[..., Repository]) -> None:
    repository = new_repository(default_branch="main")
    head = repository.commit({"README.md": "hello"})
    repository.commit({"README.md": "elsewhere"}, branch="master")

    revision = resolve(url(git_server, repository))

    assert (revision.commit.sha, revision.branch, revision.ref) == (head, "main", "refs/heads/main")


def test_resolve_detached_head_builds_the_branch_at_it(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"})
    release = repository.commit({"a": "2"}, branch="release")
    repository.detach_head(release)

    revision = resolve(url(git_server, repository))

    assert (revision.commit.sha, revision.branch, revision.ref) == (release, "release", "refs/heads/release")


def test_resolve_named_branch_builds_its_head(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"appveyor.yml": "on master"})
    feature = repository.commit({"appveyor.yml": "on feature"}, branch="feature/login")

    revision = resolve(url(git_server, repository), branch="feature/login")

    assert (revision.commit.sha, revision.branch, revision.ref) == (
        feature,
        "feature/login",
        "refs/heads/feature/login",
    )
    assert revision.service_yml == "on feature"


def test_resolve_missing_branch_is_revision_not_found(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"README.md": "hello"})

    with pytest.raises(RevisionNotFound) as raised:
        resolve(url(git_server, repository), branch="nope")

    assert str(raised.value) == "Branch 'nope' not found in the repository."


def test_resolve_empty_repository_is_revision_not_found(git_server: GitServer, repository: Repository) -> None:
    with pytest.raises(RevisionNotFound, match="has no commits"):
        resolve(url(git_server, repository))


def test_resolve_full_commit_id_builds_that_commit_with_its_own_yml(
    git_server: GitServer, repository: Repository
) -> None:
    older = repository.commit({"appveyor.yml": "old"}, message="Old")
    repository.commit({"appveyor.yml": "new"}, message="New")

    revision = resolve(url(git_server, repository), commit_id=older)

    assert (revision.commit.sha, revision.commit.message, revision.service_yml) == (older, "Old", "old")
    assert (revision.branch, revision.ref) == ("master", "refs/heads/master")


def test_resolve_commit_id_of_the_head(git_server: GitServer, repository: Repository) -> None:
    head = repository.commit({"appveyor.yml": "head"})

    revision = resolve(url(git_server, repository), commit_id=head)

    assert (revision.commit.sha, revision.service_yml) == (head, "head")


def test_resolve_abbreviated_commit_id_on_named_branch(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"})
    older = repository.commit({"a": "2"}, branch="develop")
    repository.commit({"a": "3"}, branch="develop")

    revision = resolve(url(git_server, repository), branch="develop", commit_id=older[:7].upper())

    assert (revision.commit.sha, revision.branch) == (older, "develop")


def test_resolve_commit_deeper_than_the_first_shallow_fetch(git_server: GitServer, repository: Repository) -> None:
    shas = [repository.commit({"count.txt": str(number)}, message=f"Commit {number}") for number in range(61)]

    revision = resolve(url(git_server, repository), commit_id=shas[0][:10])

    assert (revision.commit.sha, revision.commit.message) == (shas[0], "Commit 0")


def test_resolve_commit_not_on_the_branch_is_revision_not_found(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"})
    elsewhere = repository.commit({"a": "2"}, branch="other")

    with pytest.raises(RevisionNotFound) as raised:
        resolve(url(git_server, repository), commit_id=elsewhere[:8])

    assert str(raised.value) == f"Commit '{elsewhere[:8]}' not found on branch 'master'."


@pytest.mark.parametrize("commit_id", ["abc", "not-hex!", "0" * 41])
def test_resolve_commit_id_that_cannot_be_a_commit_is_revision_not_found(
    git_server: GitServer, repository: Repository, commit_id: str
) -> None:
    repository.commit({"a": "1"})

    with pytest.raises(RevisionNotFound, match="not found on branch 'master'"):
        resolve(url(git_server, repository), commit_id=commit_id)


def test_resolve_pull_request_builds_its_head_for_the_default_branch(
    git_server: GitServer, repository: Repository
) -> None:
    repository.commit({"appveyor.yml": "base"})
    proposed = repository.commit({"appveyor.yml": "proposed"}, branch="contributor")
    repository.set_ref("refs/pull/7/head", proposed)

    revision = resolve(url(git_server, repository), pull_ref="refs/pull/7/head")

    assert (revision.commit.sha, revision.branch, revision.ref) == (proposed, "master", "refs/pull/7/head")
    assert revision.service_yml == "proposed"


def test_resolve_merge_request_keeps_the_branch_given(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"})
    proposed = repository.commit({"a": "2"}, branch="contributor")
    repository.set_ref("refs/merge-requests/3/head", proposed)

    revision = resolve(url(git_server, repository), branch="release", pull_ref="refs/merge-requests/3/head")

    assert (revision.commit.sha, revision.branch) == (proposed, "release")


def test_resolve_missing_pull_request_is_revision_not_found(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"})

    with pytest.raises(RevisionNotFound) as raised:
        resolve(url(git_server, repository), pull_ref="refs/pull/7/head")

    assert str(raised.value) == "Pull request #7 not found in the repository."


# resolve: what the commit says


def test_resolve_falls_back_to_dot_appveyor_yml(git_server: GitServer, repository: Repository) -> None:
    repository.commit({".appveyor.yml": "hidden", "src/appveyor.yml": "not at the root"})

    assert resolve(url(git_server, repository)).service_yml == "hidden"


def test_resolve_prefers_appveyor_yml_to_dot_appveyor_yml(git_server: GitServer, repository: Repository) -> None:
    repository.commit({".appveyor.yml": "hidden", "appveyor.yml": "visible"})

    assert resolve(url(git_server, repository)).service_yml == "visible"


def test_resolve_without_a_configuration_file_has_none(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"README.md": "no configuration"})

    assert resolve(url(git_server, repository)).service_yml is None


def test_resolve_splits_the_message_into_title_and_extended(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"}, message="Fix the parser\n\nIt choked on tabs.\nNow it does not.\n\n")

    commit = resolve(url(git_server, repository)).commit

    assert (commit.message, commit.message_extended) == ("Fix the parser", "It choked on tabs.\nNow it does not.")


def test_resolve_one_line_message_has_no_extended(git_server: GitServer, repository: Repository) -> None:
    repository.commit({"a": "1"}, message="Just a title")

    commit = resolve(url(git_server, repository)).commit

    assert (commit.message, commit.message_extended) == ("Just a title", None)


def test_resolve_committed_time_is_in_utc(git_server: GitServer, repository: Repository) -> None:
    in_berlin = datetime(2024, 7, 1, 14, 30, 5, tzinfo=timezone(timedelta(hours=2)))
    repository.commit({"a": "1"}, committed=in_berlin)

    committed = resolve(url(git_server, repository)).commit.committed

    assert committed == datetime(2024, 7, 1, 12, 30, 5, tzinfo=UTC)
    assert committed.utcoffset() == timedelta(0)


# resolve: where the repository is


def test_resolve_local_path_and_file_url(repository: Repository) -> None:
    head = repository.commit({"appveyor.yml": "local"})

    for location in (str(repository.path), repository.path.as_uri()):
        revision = resolve(location)
        assert (revision.commit.sha, revision.branch, revision.service_yml) == (head, "master", "local")


def test_resolve_url_with_credentials_reads_the_repository(git_server: GitServer, repository: Repository) -> None:
    head = repository.commit({"a": "1"})
    with_credentials = url(git_server, repository).replace("http://", "http://builder:s3cr3t-token@")

    assert resolve(with_credentials).commit.sha == head


def test_resolve_unreachable_server_is_source_error_quickly() -> None:
    location = f"http://127.0.0.1:{closed_port()}/app.git"
    started = time.monotonic()

    with pytest.raises(SourceError) as raised:
        resolve(location)

    assert time.monotonic() - started < 5
    assert not isinstance(raised.value, RevisionNotFound)
    assert str(raised.value) == f"Cannot read the repository {location}: connection refused."


def test_resolve_silent_server_gives_up_after_the_timeout() -> None:
    with socket.socket() as silent:  # listens, so connecting succeeds, but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        started = time.monotonic()

        with pytest.raises(SourceError, match="no answer within 0.5 seconds"):
            resolve(f"http://127.0.0.1:{silent.getsockname()[1]}/app.git", timeout=0.5)

        assert time.monotonic() - started < 3


def test_resolve_credentials_never_appear_in_errors(git_server: GitServer) -> None:
    refused = f"127.0.0.1:{closed_port()}/app.git"
    missing = git_server.url_of("missing.git").removeprefix("http://")

    for location, reason in ((refused, "connection refused"), (missing, "not found, or not a git repository")):
        with pytest.raises(SourceError) as raised:
            resolve(f"http://builder:s3cr3t-token@{location}")

        assert str(raised.value) == f"Cannot read the repository http://{location}: {reason}."


def test_resolve_missing_repository_is_source_error(git_server: GitServer, tmp_path: Path) -> None:
    for location in (git_server.url_of("missing.git"), str(tmp_path)):
        with pytest.raises(SourceError) as raised:
            resolve(location)

        assert str(raised.value) == f"Cannot read the repository {location}: not found, or not a git repository."


@pytest.mark.skipif(shutil.which("git") is None, reason="git serves protocol v2 here; dulwich's server speaks v1")
def test_resolve_from_a_partial_clone_server_fetches_one_file_of_the_commit(
    repository: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    large = bytes(1_000_000)
    repository.commit({"appveyor.yml": "version: 1.0.{build}\n", "assets/large.bin": large, "src/app.py": "app"})
    with Repo(str(repository.path)) as bare:  # as GitHub and GitLab do: blobs can be left behind, then fetched by id
        config = bare.get_config()
        config.set((b"uploadpack",), b"allowFilter", True)
        config.write_to_path()
    memories: list[MemoryRepo] = []

    class RecordedMemoryRepo(MemoryRepo):
        def __init__(self) -> None:
            super().__init__()
            memories.append(self)

    monkeypatch.setattr(git, "MemoryRepo", RecordedMemoryRepo)

    with git_daemon(repository.path.parent) as base_url:
        revision = resolve(f"{base_url}/{repository.path.name}")

    assert revision.service_yml == "version: 1.0.{build}\n"
    [memory] = memories
    assert Blob.from_string(large).id not in memory.object_store
    assert Blob.from_string(b"app").id not in memory.object_store


@pytest.mark.parametrize("location", ["git@github.com:owner/app.git", "svn://example.com/app", "app"])
def test_resolve_rejects_urls_it_cannot_fetch_from(location: str) -> None:
    with pytest.raises(SourceError, match="only http\\(s\\)://, git://, ssh:// and local repositories are supported"):
        resolve(location)


def test_resolve_over_ssh_needs_a_deploy_key() -> None:
    with pytest.raises(SourceError, match="ssh:// needs the project's deploy key"):
        resolve("ssh://git@example.com/app.git")


# checkout


def test_checkout_older_commit_gives_its_exact_tree(
    git_server: GitServer, repository: Repository, tmp_path: Path
) -> None:
    older = repository.commit(
        {"build.sh": "#!/bin/sh\necho build\n", "src/app/main.py": "print('v1')\n", "gone.txt": "removed later"},
        executable={"build.sh"},
    )
    repository.commit({"build.sh": "#!/bin/sh\necho build v2\n", "src/app/main.py": "print('v2')\n"})

    checkout(url(git_server, repository), "refs/heads/master", older, tmp_path)

    assert tree_of(tmp_path) == {
        "build.sh": "#!/bin/sh\necho build\n",
        "gone.txt": "removed later",
        "src/app/main.py": "print('v1')\n",
    }
    assert os.stat(tmp_path / "build.sh").st_mode & stat.S_IXUSR
    assert not os.stat(tmp_path / "gone.txt").st_mode & stat.S_IXUSR
    assert (tmp_path / ".git" / "HEAD").read_text().strip() == older  # detached at the commit built


def test_checkout_with_depth_one_fetches_only_the_head(
    git_server: GitServer, repository: Repository, tmp_path: Path
) -> None:
    repository.commit({"a.txt": "1"})
    head = repository.commit({"a.txt": "2"})

    checkout(url(git_server, repository), "refs/heads/master", head, tmp_path, depth=1)

    assert tree_of(tmp_path) == {"a.txt": "2"}
    assert (tmp_path / ".git" / "shallow").read_text().split() == [head]


def test_checkout_commit_the_branch_moved_past_fetches_deeper(
    git_server: GitServer, repository: Repository, tmp_path: Path
) -> None:
    built = repository.commit({"a.txt": "built"})
    for number in range(3):
        repository.commit({"a.txt": f"pushed since {number}"})

    checkout(url(git_server, repository), "refs/heads/master", built, tmp_path, depth=1)

    assert tree_of(tmp_path) == {"a.txt": "built"}


def test_checkout_pull_request_ref(git_server: GitServer, repository: Repository, tmp_path: Path) -> None:
    repository.commit({"a.txt": "base"})
    proposed = repository.commit({"a.txt": "proposed"}, branch="contributor")
    repository.set_ref("refs/pull/7/head", proposed)

    checkout(url(git_server, repository), "refs/pull/7/head", proposed, tmp_path, depth=1)

    assert tree_of(tmp_path) == {"a.txt": "proposed"}


def test_checkout_commit_not_on_the_ref_is_revision_not_found(
    git_server: GitServer, repository: Repository, tmp_path: Path
) -> None:
    repository.commit({"a.txt": "1"})
    elsewhere = repository.commit({"a.txt": "2"}, branch="other")

    with pytest.raises(RevisionNotFound, match=f"Commit '{elsewhere}' not found on 'refs/heads/master'"):
        checkout(url(git_server, repository), "refs/heads/master", elsewhere, tmp_path)


def test_checkout_from_local_path(repository: Repository, tmp_path: Path) -> None:
    head = repository.commit({"tools/run.sh": "#!/bin/sh\n"}, executable={"tools/run.sh"})

    checkout(str(repository.path), "refs/heads/master", head, tmp_path, depth=1)

    assert tree_of(tmp_path) == {"tools/run.sh": "#!/bin/sh\n"}
    assert os.stat(tmp_path / "tools" / "run.sh").st_mode & stat.S_IXUSR


def test_checkout_unreachable_server_is_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="connection refused"):
        checkout(f"http://127.0.0.1:{closed_port()}/app.git", "refs/heads/master", "a" * 40, tmp_path)
