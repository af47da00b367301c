"""The runner function's scratch folder is emptied between jobs, even of what a build locked itself out of."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.aws_lambda import empty_folder


def test_everything_a_build_left_is_removed_and_the_folder_stays(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    locked = scratch / "locked" / "inner"
    locked.mkdir(parents=True)
    (locked / "secret.txt").write_text("an earlier job's")
    (scratch / "locked").chmod(0)  # mode 000: its own user may not enter it
    readonly = scratch / "go" / "pkg" / "mod"
    readonly.mkdir(parents=True)
    (readonly / "module.go").write_text("package m")
    readonly.chmod(0o555)  # read-only, as Go's module cache is
    (scratch / "link").symlink_to(tmp_path / "elsewhere")
    (scratch / "file.txt").write_text("left")

    empty_folder(scratch)

    assert scratch.is_dir() and list(scratch.iterdir()) == []
