"""What a cache entry holds (runner/cache_contents.py): its checksum follows names, kinds and contents, never times,
and a link leading out of the build folder is refused, not read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chalicelib.runner.beneath import Outside, pin
from chalicelib.runner.cache_contents import content_checksum, dependencies_checksum, members


def test_an_entrys_checksum_changes_with_its_contents_and_not_with_its_times(tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "deps" / "sub").mkdir(parents=True)
    (build / "deps" / "sub" / "a.txt").write_text("one")
    with pin(tmp_path, build) as root:
        before = content_checksum(root, "deps")
        os.utime(build / "deps" / "sub" / "a.txt", (0, 0))
        untouched = content_checksum(root, "deps")
        (build / "deps" / "sub" / "a.txt").write_text("two")
        changed = content_checksum(root, "deps")
        names = [member.name for member in members(root, "deps")]

    assert before == untouched != changed
    assert names == ["deps", "deps/sub", "deps/sub/a.txt"]


def test_a_link_leading_out_of_the_build_folder_is_refused_and_a_missing_dependency_counts_as_empty(
    tmp_path: Path,
) -> None:
    build = tmp_path / "build"
    build.mkdir()
    (tmp_path / "secret").write_text("the host's")
    (build / "out").symlink_to(tmp_path / "secret")
    with pin(tmp_path, build) as root:
        with pytest.raises(Outside):
            content_checksum(root, "out")
        assert dependencies_checksum(root, ("missing.lock",)) != dependencies_checksum(root, ())
        assert dependencies_checksum(root, ("missing.lock",)) == dependencies_checksum(root, ("missing.lock",))
