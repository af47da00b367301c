"""One job as conveyor exec's service keeps it (chalicelib/local/exec/jobs.py): its token, its reports, its end."""

from __future__ import annotations

import base64
import io

from chalicelib.local.exec.console import Console
from chalicelib.local.exec.jobs import ExecJob


def job(stream: io.StringIO) -> ExecJob:
    return ExecJob(spec={"jobId": "exec1", "jobName": ""}, console=Console(stream), prefix="")  # type: ignore[typeddict-item]


def test_only_the_jobs_own_token_is_taken_and_only_while_it_runs() -> None:
    running = job(io.StringIO())

    assert running.holds(f"Bearer {running.token}")
    assert not running.holds(f"Bearer {running.token}x") and not running.holds(running.token)
    running.finish({"result": "success", "logChunks": 0})
    assert not running.holds(f"Bearer {running.token}")


def test_an_update_changes_the_fields_it_carries_and_counts_follow() -> None:
    reported = job(io.StringIO())
    reported.add_tests(
        [{"testName": "a", "outcome": "Running", "fileName": "t.py"}, {"testName": "b", "outcome": "Passed"}]
    )
    reported.add_tests([{"testName": "a", "outcome": "Failed", "fileName": None}], update=True)

    assert reported.tests["a"] == {"testName": "a", "outcome": "Failed", "fileName": "t.py"}
    assert reported.counts() == (1, 1)


def test_the_finish_prints_the_logs_tail_then_what_the_job_reported() -> None:
    stream = io.StringIO()
    finished = job(stream)
    finished.put_log(0, b"first\n")
    finished.add_messages([{"message": "careful", "category": "warning"}])
    finished.add_tests([{"testName": "t", "outcome": "Failed"}])

    finished.finish({
        "result": "failed", "message": "Command exited with code 1", "logChunks": 1,
        "logTail": base64.b64encode(b"first\nlast\n").decode(), "artifacts": [{"fileName": "a.zip", "size": 2048}],
    })  # fmt: skip

    assert stream.getvalue().splitlines() == [
        "first",
        "last",
        "Message (warning): careful",
        "Test Failed: t",
        "Tests: 1, 0 passed, 1 failed",
        "Artifact: a.zip (2,048 bytes)",
    ]
    assert (finished.result, finished.message, len(finished.artifacts)) == ("failed", "Command exited with code 1", 1)
