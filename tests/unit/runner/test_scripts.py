"""A phase's scripts as AppVeyor runs them: in order in the job's one Bash session, the first that fails failing
the job, ``exit 0`` ending it green and ``exit N`` red. Runs bash in a temporary folder; no service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.runner.run import Run
from chalicelib.runner.scripts import JobEnded, JobFailed, run_phase
from tests.unit.runner.runs import Log, new_run


@pytest.fixture
def log() -> Log:
    return Log()


@pytest.fixture
def run(tmp_path: Path, log: Log) -> Iterator[Run]:
    attempt = new_run(tmp_path, log)
    yield attempt
    attempt.session.close()


def script(text: str) -> dict[str, str]:
    return {"language": "cmd", "script": text}


def test_the_first_failing_script_fails_the_job_and_nothing_after_it_runs(run: Run, log: Log) -> None:
    with pytest.raises(JobFailed, match="Command exited with code 2 in build_script") as failed:
        run_phase(
            run,
            "build_script",
            [script("STEP=one"), script("echo $STEP; exit_code() { return 2; }; exit_code"), script("echo never")],
        )
    run.log.flush()

    assert failed.value.phase == "build_script"
    assert run.messages == ["Command exited with code 2"]
    assert "one" in log.lines() and "never" not in log.lines()


def test_a_failure_in_a_phase_that_may_fail_is_logged_and_the_next_script_runs(run: Run, log: Log) -> None:
    run_phase(run, "on_failure", [script("false"), script("echo still here")], may_fail=True)
    run.log.flush()

    assert "Command exited with code 1 (in on_failure; the job's result stands)" in log.lines()
    assert "still here" in log.lines()


@pytest.mark.parametrize(("code", "succeeded"), [(0, True), (5, False)])
def test_exit_ends_the_job_at_once_green_for_0_and_red_otherwise(run: Run, code: int, succeeded: bool) -> None:
    with pytest.raises(JobEnded) as ended:
        run_phase(run, "test_script", [script(f"exit {code}"), script("echo never")])

    assert ended.value.succeeded is succeeded


def test_a_failing_command_is_named_as_written_with_its_phase(run: Run, log: Log) -> None:
    with pytest.raises(JobFailed) as failed:
        run_phase(run, "test_script", [script("echo testing\nnot-a-command-here --all")])
    run.log.flush()

    assert str(failed.value) == "Command exited with code 127 in test_script: echo testing ..."
    assert log.lines()[-1] == str(failed.value)  # the log says it last
    assert "bash: not-a-command-here: command not found" in log.lines()
