"""stack: and services: applied in the job's Bash session before init (runner/stacks.py). Here the session is this
machine's Bash, which has no image profile: what the image would do is not there, and the job fails naming it
(the builds of tests/functional/test_image_tools.py apply them in Conveyor's image)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chalicelib.runner import stacks
from chalicelib.runner.job_spec import read_spec
from chalicelib.runner.scripts import JobFailed
from tests.unit.runner.runs import Log, new_run


def spec_with(stack: list[str], services: list[str]) -> dict[str, object]:
    configuration = {"stacks": [{"value": v} for v in stack], "services": [{"value": v} for v in services]}
    return dict(read_spec({"source": {}, "configuration": configuration}))


def test_a_stack_the_session_cannot_apply_fails_the_job_naming_it(tmp_path: Path) -> None:
    log = Log()
    run = new_run(tmp_path, log, spec_with(["node 18"], []))  # type: ignore[arg-type]
    try:
        with pytest.raises(JobFailed, match=r"stack: node 18 could not be set up \(exit code 127\)"):
            stacks.apply(run)
    finally:
        run.session.close()
    run.log.flush()
    assert "stack: node 18" in log.lines()
    assert run.messages == ["stack: node 18 could not be set up (exit code 127): the job's log says why."]


def test_services_are_started_before_the_languages_and_a_failure_stops_there(tmp_path: Path) -> None:
    log = Log()
    run = new_run(tmp_path, log, spec_with(["node 18"], ["redis"]))  # type: ignore[arg-type]
    try:
        with pytest.raises(JobFailed, match="services could not be set up"):
            stacks.apply(run)
    finally:
        run.session.close()
    run.log.flush()
    assert "Starting services: redis" in log.lines()
    assert "stack: node 18" not in log.lines()  # never reached


def test_nothing_asked_runs_nothing(tmp_path: Path) -> None:
    run = new_run(tmp_path, Log(), spec_with([], []))  # type: ignore[arg-type]
    stacks.apply(run)
    assert not run.session.ended and run.messages == []
