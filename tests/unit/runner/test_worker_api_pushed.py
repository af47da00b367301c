"""The file ``appveyor PushArtifact`` names: below the build folder, and in a container's job never one a link or a
``..`` leads out of it to."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from chalicelib.runner.container import PROJECTS_FOLDER, JobContainer
from chalicelib.runner.run import Run
from chalicelib.runner.worker_api_fields import BadRequest
from chalicelib.runner.worker_api_pushed import pushed_file


def _run(folder: Path, container: JobContainer | None) -> Run:
    """The two things of an attempt a pushed file is found by (a real Run would start the container's shell)."""
    return cast(Run, SimpleNamespace(folder=folder, container=container))


def test_beside_the_runner_a_relative_path_is_read_below_the_build_folder(tmp_path: Path) -> None:
    (tmp_path / "app.zip").write_bytes(b"zip")

    with pushed_file(_run(tmp_path, None), "app.zip") as path:
        assert path.read_bytes() == b"zip"
    with (
        pytest.raises(BadRequest, match=re.escape(f"{tmp_path} is not a file.")),
        pushed_file(_run(tmp_path, None), str(tmp_path)),
    ):
        pass


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads the opened file by its descriptor")
def test_in_a_container_only_a_file_below_the_build_folder_is_pushed(tmp_path: Path) -> None:
    folder = tmp_path / PROJECTS_FOLDER / "project"
    folder.mkdir(parents=True)
    (folder / "app.zip").write_bytes(b"zip")
    (tmp_path / "secret").write_text("the machine's")
    (folder / "link.zip").symlink_to(tmp_path / "secret")
    run = _run(folder, JobContainer(tmp_path, -1, -1))

    with pushed_file(run, "app.zip") as path:
        assert path.read_bytes() == b"zip"
    for outside, why in [("link.zip", "leads out of the build folder"), ("../../secret", "is not in the build folder")]:
        with pytest.raises(BadRequest, match=why), pushed_file(run, outside):
            pass
