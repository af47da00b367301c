"""stack: and services: applied in the job's Bash session before init (runner/stacks.py). Here the session is this
machine's Bash: with the image's profile said to be here, what the image would do is not there and the job fails
naming it; without it (a build agent's machine) they are left to the machine (the builds of
tests/functional/test_image_tools.py apply them in Conveyor's image)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chalicelib.protocol.job_spec import read_spec
from chalicelib.runner import stacks
from chalicelib.runner.scripts import JobFailed
from tests.unit.runner.runs import Log, new_run


def spec_with(stack: list[str], services: list[str]) -> dict[str, object]:
    configuration = {"stacks": [{"value": v} for v in stack], "services": [{"value": v} for v in services]}
    return dict(read_spec({"source": {}, "configuration": configuration}))


@pytest.fixture
def in_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner believes it runs in Conveyor's image (as on CodeBuild), whose profile this machine lacks."""
    profile = tmp_path / "session.sh"
    profile.write_text("")
    monkeypatch.setattr(stacks, "PROFILE", profile)


@pytest.mark.usefixtures("in_image")
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


@pytest.mark.usefixtures("in_image")
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


def test_on_a_machine_that_is_not_the_image_they_are_left_to_the_machine_and_the_job_goes_on(tmp_path: Path) -> None:
    log = Log()
    run = new_run(tmp_path, log, spec_with(["node 18"], ["redis"]))  # type: ignore[arg-type]
    stacks.apply(run)
    run.log.flush()

    assert not run.session.ended and run.messages == []
    assert "stack: and services: are this machine's own business: it is not Conveyor's image." in log.lines()


def test_nothing_asked_runs_nothing(tmp_path: Path) -> None:
    run = new_run(tmp_path, Log(), spec_with([], []))  # type: ignore[arg-type]
    stacks.apply(run)
    assert not run.session.ended and run.messages == []
