"""Where conveyor exec keeps what jobs hand over (chalicelib/local/exec/folders.py): its own ignored folder of the
checkout, never reached through a link a checkout holds."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chalicelib.errors import Invalid
from chalicelib.local.exec.console import Console
from chalicelib.local.exec.folders import StateFolders, UnsafeFolder, job_folder_name, receive
from chalicelib.local.exec.jobs import ExecJob


def job(name: str = "Environment: A=1") -> ExecJob:
    return ExecJob(spec={"jobId": "exec2", "jobName": name}, console=Console(io.StringIO()), prefix="")  # type: ignore[typeddict-item]


def test_an_artifact_lands_in_its_jobs_folder_which_ignores_itself(tmp_path: Path) -> None:
    state = StateFolders(tmp_path)
    target = state.artifact_path(job(), "dist/app.zip")
    receive(io.BytesIO(b"zipped"), 6, target)

    assert target == tmp_path / ".conveyor" / "exec" / "artifacts" / "2-environment-a-1" / "dist" / "app.zip"
    assert target.read_bytes() == b"zipped"
    assert (tmp_path / ".conveyor" / "exec" / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../x", "", "a/./b", "a//b"])
def test_an_artifact_name_leading_elsewhere_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(Invalid):
        StateFolders(tmp_path).artifact_path(job(), name)


def test_a_conveyor_folder_that_is_a_link_is_refused_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".conveyor").symlink_to(elsewhere)

    with pytest.raises(UnsafeFolder, match="a link"):
        StateFolders(checkout)
    assert list(elsewhere.iterdir()) == []


def test_a_jobs_folder_is_emptied_when_it_starts(tmp_path: Path) -> None:
    state = StateFolders(tmp_path)
    receive(io.BytesIO(b"old"), 3, state.artifact_path(job(), "old.txt"))

    folder = state.job_folder(job())

    assert not folder.exists()
    assert job_folder_name("exec3", "") == "3"
