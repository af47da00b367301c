"""How a job's source is fetched: by its clone_script, which is handed none of the project's credentials, or into a
build folder the runner pins first, so a folder swapped for a link is fetched into nowhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chalicelib.runner.job_source import clone
from chalicelib.runner.scripts import JobFailed
from tests.unit.runner.runs import Log, new_run

SHA = "0123456789abcdef0123456789abcdef01234567"


def _spec(clone_scripts: list[dict[str, str]]) -> Any:
    source = {"url": "http://127.0.0.1:9/org/app.git", "ref": "refs/heads/main", "commitId": SHA, "depth": None}
    return {
        "jobId": "job-1",
        "configuration": {"cloneFolder": None, "cloneScripts": clone_scripts},
        "source": {**source, "credentials": True},
    }


def test_a_clone_script_fetches_the_source_and_is_told_the_credentials_are_not_its(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    log = Log()
    run = new_run(tmp_path / "build", log, _spec([{"language": "cmd", "script": "echo fetched > fetched.txt"}]))
    try:
        clone(run)
    finally:
        run.session.close()
    run.log.flush()

    assert (tmp_path / "build" / "fetched.txt").read_text() == "fetched\n"
    assert "clone_script fetches the repository: the project's clone credentials are not given to scripts." in (
        log.lines()
    )


def test_a_build_folder_swapped_for_a_link_is_not_fetched_into(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "build").symlink_to(tmp_path / "elsewhere")
    run = new_run(tmp_path / "build", Log(), _spec([]))
    try:
        with pytest.raises(JobFailed, match="The source was not fetched"):
            clone(run)
    finally:
        run.session.close()

    assert list((tmp_path / "elsewhere").iterdir()) == []
