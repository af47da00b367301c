"""Attacks on per-test history and quarantine (review of issue 38): who may make a test flaky, and so hide its
failures once quarantine is on."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.builds import appveyor_yml
from tests.functional.test_test_history import (  # noqa: F401 (fixture)
    Attempts,
    attempts,
    junit,
    make_flaky,
    quarantine_asked,
)
from tests.functional.test_untrusted_build_attacks import builder, member_of_role  # noqa: F401 (fixture)
from tests.runners import RunnerProcess, dispatch
from tests.support import Caller


def job_tests(runs: Attempts, job_id: str) -> list[dict[str, Any]]:
    """The job's tests as GET /api/buildjobs/{jobId}/tests lists them."""
    reply = runs.account.api.get(f"/buildjobs/{job_id}/tests")
    assert reply.status == 200, reply.body
    return list(reply.json)


def test_a_builder_cannot_make_a_test_flaky_by_uploading_results_into_a_build_it_started(
    attempts: Attempts,  # noqa: F811
    builder: Caller,  # noqa: F811
) -> None:
    """A member who may only run builds starts the project's own build (no variables: a trusted build) and, while
    it runs, sends a results file with their key saying a test failed; the same commit passed it before. Issue 38's
    rule keeps such a member's builds (with variables) from making tests flaky; their uploads into a trusted build
    must not either, or with quarantine on the test's real failures stop failing the project's jobs."""
    attempts.account.api.put(f"{attempts.project.path}/tests/quarantine", {"enabled": True})
    assert attempts.attempt(attempts.start(), junit(divides="passed"), "success").status == 204  # honest: passed

    started = builder.post(
        "/builds", {"accountName": attempts.account.name, "projectSlug": attempts.project.project["slug"]}
    )
    assert started.status == 200, started.body
    attempts.build = started.json
    job_id = str(attempts.project.build(started.json["version"])["jobs"][0]["jobId"])
    token = dispatch(job_id, attempts.api_url).token  # its runner runs it, and reports nothing yet
    forged = builder.call("POST", f"/testresults/junit/{job_id}", raw=junit(divides="failed"))
    assert forged.status == 200, forged.body  # the route takes a key that may run builds (docs/api.md)
    runner = Caller(attempts.account.client, None, authorization=f"Bearer {token}")
    finished = runner.post(
        f"/runner/jobs/{job_id}/finish", {"result": "success", "message": None, "logChunks": 0, "artifacts": []}
    )
    assert finished.status == 204, finished.body

    assert attempts.tests()["suite.divides"]["flaky"] is False
    assert attempts.account.api.get(f"{attempts.project.path}/tests/quarantine").json["tests"] == []
    assert quarantine_asked(attempts, junit(divides="failed")).json == {"quarantined": []}  # a real failure fails


def test_a_builder_cannot_turn_a_real_failure_into_a_quarantined_one_by_sending_results_with_their_key(
    attempts: Attempts,  # noqa: F811
    builder: Caller,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Issue 43, section 1, played as the attacker would: quarantine on and ``suite.divides`` (Q) in it; a branch
    build reports ``suite.adds`` (F) failed and its test_script exits non-zero; before the runner asks the quarantine,
    a member who may only run builds sends, with their own key, F passed and Q failed. The upload must not replace
    what the build reported: the job ends failed, and its tests and the project's history still say F failed."""
    make_flaky(attempts)
    assert attempts.account.api.put(f"{attempts.project.path}/tests/quarantine", {"enabled": True}).json["tests"]
    sent = tmp_path / "sent"  # the script waits for the attacker's upload, which the test makes, then fails
    wait = f'for i in $(seq 1200); do [ -e "{sent}" ] && break; sleep 0.1; done'
    failed = junit(adds="failed").decode()
    attempts.project.repository.commit(
        {
            "appveyor.yml": appveyor_yml(
                "build: off",
                "test_script:",
                f"  - printf '%s' '{failed}' > results.xml",
                '  - curl -sS -f -F "file=@results.xml" "$APPVEYOR_API_URL/api/testresults/junit/$APPVEYOR_JOB_ID"',
                f"  - {wait}",
                "  - (exit 1)",
                "after_test:",
                "  - echo after_test ran",
            )
        }
    )
    job_id = attempts.start()
    runner = RunnerProcess(dispatch(job_id, attempts.api_url))
    deadline = time.monotonic() + 60
    while not job_tests(attempts, job_id):  # the build's own report is in
        assert time.monotonic() < deadline, "the build never reported its test"
        time.sleep(0.1)

    forged = builder.call("POST", f"/testresults/junit/{job_id}", raw=junit(adds="passed", divides="failed"))
    assert forged.status == 200, forged.body
    sent.touch()
    runner.wait(seconds=120)

    job = attempts.job()
    log = attempts.project.log(job_id)
    assert job["status"] == "failed", log
    assert "after_test ran" not in log and "Quarantined" not in log
    assert (job["testsCount"], job["passedTestsCount"], job["failedTestsCount"]) == (2, 0, 2), job
    reported = [
        (test["testName"], test["outcome"], test.get("sentFromOutside")) for test in job_tests(attempts, job_id)
    ]
    assert sorted(reported) == [
        ("suite.adds", "Failed", False),  # the build's own word stands
        ("suite.adds", "Passed", True),  # the upload is kept beside it, marked
        ("suite.divides", "Failed", True),
    ]
    adds = attempts.tests()["suite.adds"]
    history = attempts.account.api.get(f"{attempts.project.path}/tests/{adds['testId']}/history").json["runs"]
    assert (history[0]["jobId"], history[0]["outcome"], history[0].get("sentFromOutside")) == (job_id, "Failed", False)
    assert adds["recentOutcomes"].endswith("F")
