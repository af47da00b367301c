"""Where a Windows build agent puts a job's build folder, and removing what a job leaves."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PureWindowsPath
from typing import Any

import pytest

from chalicelib.runner.windows.workspace import build_folder, long_path, remove_tree


def test_without_a_projects_root_the_build_folder_is_the_jobs_own_and_clone_folder_is_said_unused() -> None:
    said: list[str] = []
    folder = build_folder(Path("work"), "app", "C:\\src\\app", None, said.append)

    assert folder == Path("work") / "build"
    assert "clone_folder C:\\src\\app is not used" in said[0] and "--projects" in said[0]


def test_with_a_projects_root_the_build_folder_is_the_slug_below_it_as_on_appveyor() -> None:
    assert str(build_folder(Path("w"), "app", None, "C:\\projects", print)) == "C:\\projects\\app"


def test_a_clone_folder_below_the_root_is_honoured_and_one_elsewhere_is_not() -> None:
    said: list[str] = []
    inside = build_folder(Path("w"), "app", "C:\\Projects\\Deep\\App", "C:\\projects", said.append)
    relative = build_folder(Path("w"), "app", "deep\\app", "C:\\projects", said.append)
    outside = build_folder(Path("w"), "app", "C:\\Windows\\System32", "C:\\projects", said.append)
    climbing = build_folder(Path("w"), "app", "..\\Windows", "C:\\projects", said.append)

    assert PureWindowsPath(str(inside)) == PureWindowsPath("C:\\Projects\\Deep\\App")
    assert str(relative) == "C:\\projects\\deep\\app"
    assert str(outside) == str(climbing) == "C:\\projects\\app"
    assert len(said) == 2 and all("below C:\\projects only" in line for line in said)


def test_remove_tree_removes_read_only_files_as_git_leaves_its_packs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = tmp_path / "job" / ".git" / "objects" / "pack" / "pack-1.pack"
    pack.parent.mkdir(parents=True)
    pack.write_bytes(b"PACK")
    pack.chmod(stat.S_IREAD)
    unlink = os.unlink

    def as_windows_unlinks(path: str, *, dir_fd: int | None = None) -> None:
        """Windows refuses to delete a read-only file (root on Linux would not)."""
        if not os.stat(path, dir_fd=dir_fd).st_mode & stat.S_IWRITE:
            raise PermissionError(13, "Access is denied", path)
        unlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", as_windows_unlinks)
    remove_tree(tmp_path / "job")
    remove_tree(tmp_path / "job")  # gone already: nothing to do

    assert not (tmp_path / "job").exists()


def test_long_paths_are_left_as_they_are_off_windows(tmp_path: Path) -> None:
    assert long_path(tmp_path) == os.path.abspath(tmp_path)


@pytest.mark.parametrize(
    "slug", ["..\\..\\Users\\owner\\Documents", "../../Users/owner", "C:\\Users\\owner", "a\\..\\.."]
)
def test_a_slug_that_leads_out_of_the_projects_root_is_refused_saying_so(slug: str) -> None:
    said: list[str] = []
    folder = build_folder(Path("w"), slug, None, "C:\\projects", said.append)

    assert folder == Path("w") / "build"
    assert len(said) == 1 and "below C:\\projects" in said[0] and slug in said[0]


def test_the_runner_takes_the_slug_from_the_spec_never_from_the_jobs_variables() -> None:
    from chalicelib.runner.job_environment import project_slug

    forged = {"APPVEYOR_PROJECT_SLUG": "..\\..\\Users\\owner\\Documents"}
    spec: Any = {"variables": forged, "projectSlug": "app"}

    assert project_slug(spec) == "app"
    assert project_slug({"variables": forged}) == "project"  # a service from before sent none
    assert project_slug({"variables": {}, "projectSlug": "../escape"}) == "project"
