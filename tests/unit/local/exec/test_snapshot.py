"""The working tree as one commit (chalicelib/local/exec/snapshot.py): what ``git add --all`` would stage."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.objects import Blob, Tree

from chalicelib.local.exec.snapshot import NotACheckout, Snapshot, take


def committed(folder: Path, files: dict[str, str]) -> Path:
    porcelain.init(str(folder))
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    porcelain.add(str(folder), [str(folder / name) for name in files])
    porcelain.commit(str(folder), message=b"First\n\nmore", author=b"A <a@e>", committer=b"A <a@e>")
    return folder


def files_of(snapshot: Snapshot) -> dict[str, bytes]:
    found: dict[str, bytes] = {}

    def walk(tree_id: bytes, prefix: str) -> None:
        tree = snapshot.repository[tree_id]
        assert isinstance(tree, Tree)
        for entry in tree.iteritems():
            item = snapshot.repository[entry.sha]
            name = prefix + entry.path.decode()
            if isinstance(item, Tree):
                walk(entry.sha, name + "/")
            else:
                assert isinstance(item, Blob)
                found[name] = item.data

    walk(snapshot.commit.tree, "")
    return found


def test_a_clean_tree_is_head_itself(tmp_path: Path) -> None:
    folder = committed(tmp_path, {"a.txt": "a\n", "src/b.py": "b\n"})

    snapshot = take(folder)

    assert not snapshot.dirty
    assert snapshot.commit_id == porcelain.rev_parse(str(folder), "HEAD").decode()
    assert (snapshot.branch, snapshot.ref) == ("master", "refs/heads/master")


def test_by_default_tracked_files_go_in_as_on_disk_and_untracked_ones_stay_out_counted(tmp_path: Path) -> None:
    folder = committed(tmp_path, {".gitignore": "*.log\n", "kept.txt": "old\n", "gone.txt": "x\n"})
    (folder / "kept.txt").write_text("new\n")
    (folder / "gone.txt").unlink()
    (folder / "added.txt").write_text("added\n")
    (folder / "src").mkdir()
    (folder / "src" / "new.py").write_text("new\n")
    (folder / "debug.log").write_text("ignored\n")

    snapshot = take(folder)

    assert snapshot.dirty
    assert files_of(snapshot) == {".gitignore": b"*.log\n", "kept.txt": b"new\n"}
    assert snapshot.untracked == ("added.txt", "src/new.py")


def test_an_untracked_file_a_pull_requests_gitignore_unignores_stays_out_by_default(tmp_path: Path) -> None:
    folder = committed(tmp_path, {".gitignore": "*.log\n!.env\n", "app.py": "app\n"})
    (folder / ".env").write_text("AWS_SECRET_ACCESS_KEY=the-users-own\n")

    snapshot = take(folder)

    assert not snapshot.dirty and ".env" not in files_of(snapshot)
    assert snapshot.untracked == (".env",)


def test_with_untracked_changes_and_untracked_files_go_in_ignored_and_deleted_ones_stay_out(tmp_path: Path) -> None:
    folder = committed(tmp_path, {".gitignore": "*.log\nbuild/\n", "kept.txt": "old\n", "gone.txt": "x\n"})
    (folder / "kept.txt").write_text("new\n")
    (folder / "gone.txt").unlink()
    (folder / "added.txt").write_text("added\n")
    (folder / "debug.log").write_text("ignored\n")
    (folder / "build").mkdir()
    (folder / "build" / "out.o").write_text("ignored\n")
    (folder / ".conveyor" / "exec" / "artifacts").mkdir(parents=True)
    (folder / ".conveyor" / "exec" / "artifacts" / "a.zip").write_text("exec's own\n")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(folder / "run.sh", 0o755)

    snapshot = take(folder, untracked=True)

    assert snapshot.dirty
    assert files_of(snapshot) == {
        ".gitignore": b"*.log\nbuild/\n", "kept.txt": b"new\n", "added.txt": b"added\n", "run.sh": b"#!/bin/sh\n"
    }  # fmt: skip
    assert snapshot.commit.parents == [porcelain.rev_parse(str(folder), "HEAD")]
    assert snapshot.commit.message.startswith(b"conveyor exec: the working tree, with changes not committed")
    modes = {entry.path: entry.mode for entry in snapshot.repository[snapshot.commit.tree].iteritems()}  # type: ignore[union-attr]
    assert modes[b"run.sh"] == 0o100755 and modes[b"kept.txt"] == 0o100644


def test_a_tracked_file_git_would_ignore_now_stays_in(tmp_path: Path) -> None:
    folder = committed(tmp_path, {"config.local": "tracked\n"})
    (folder / ".gitignore").write_text("config.local\n")

    assert "config.local" in files_of(take(folder))


def test_the_snapshot_is_served_at_its_branch(tmp_path: Path) -> None:
    folder = committed(tmp_path, {"a.txt": "a\n"})

    snapshot = take(folder, branch="release")

    assert snapshot.repository.refs[b"refs/heads/release"] == snapshot.commit_id.encode()


def test_a_detached_head_needs_a_branch_and_a_folder_outside_git_is_refused(tmp_path: Path) -> None:
    folder = committed(tmp_path / "repo", {"a.txt": "a\n"})
    (folder / ".git" / "HEAD").write_text(porcelain.rev_parse(str(folder), "HEAD").decode() + "\n")
    (tmp_path / "plain").mkdir()

    with pytest.raises(NotACheckout, match="--branch"):
        take(folder)
    assert take(folder, branch="main").branch == "main"
    with pytest.raises(NotACheckout, match="not a git checkout"):
        take(tmp_path / "plain")


def test_a_worktrees_git_file_is_not_part_of_the_tree(tmp_path: Path) -> None:
    main = committed(tmp_path / "main", {"a.txt": "a\n"})
    worktree = Path(porcelain.worktree_add(str(main), str(tmp_path / "wt"), branch="topic"))
    (worktree / "b.txt").write_text("b\n")

    snapshot = take(worktree, untracked=True)

    assert (worktree / ".git").is_file()
    assert files_of(snapshot) == {"a.txt": b"a\n", "b.txt": b"b\n"}
    assert snapshot.branch == "topic"


def test_the_remote_origin_is_noted(tmp_path: Path) -> None:
    folder = committed(tmp_path, {"a.txt": "a\n"})
    porcelain.remote_add(str(folder), "origin", "https://git.example.com/team/app.git")

    assert take(folder).origin == "https://git.example.com/team/app.git"


def test_a_link_is_kept_as_a_link_even_to_a_folder_and_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.key").write_text("not the checkout's\n")
    folder = committed(tmp_path / "repo", {"a.txt": "a\n"})
    (folder / "elsewhere").symlink_to(outside)
    (folder / "to-a").symlink_to("a.txt")

    found = files_of(take(folder, untracked=True))

    assert found == {"a.txt": b"a\n", "elsewhere": str(outside).encode(), "to-a": b"a.txt"}
