"""Tests a key sends into a running job from outside the build (issue 43): kept beside the build's own, marked, and
never counted in the build's place; the build's own failures stand once reported; items stored before still read."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.core.reports import SENT_FROM_OUTSIDE
from chalicelib.domain.job_protocol import job_reports
from chalicelib.store.delivery_models import JobReportModel
from tests.functional.test_test_history import Attempts, attempts, junit, make_flaky  # noqa: F401 (fixture)
from tests.runners import dispatch
from tests.support import Caller, Reply

ADDS_PASSED = {"testName": "suite.adds", "outcome": "Passed"}
ADDS_FAILED = {"testName": "suite.adds", "outcome": "Failed"}


def quarantined_job(runs: Attempts) -> tuple[str, Caller]:
    """A claimed job of a project whose suite.divides is flaky and whose quarantine is on, and its runner."""
    make_flaky(runs)
    assert runs.account.api.put(f"{runs.project.path}/tests/quarantine", {"enabled": True}).status == 200
    return claimed(runs)


def claimed(runs: Attempts) -> tuple[str, Caller]:
    """A new build's job, claimed as dispatch claims it, and its runner (the job's token)."""
    job_id = runs.start()
    token = dispatch(job_id, runs.api_url).token
    return job_id, Caller(runs.account.client, None, authorization=f"Bearer {token}")


def finish(runner: Caller, job_id: str, result: str = "failed") -> None:
    reply = runner.post(
        f"/runner/jobs/{job_id}/finish", {"result": result, "message": None, "logChunks": 0, "artifacts": []}
    )
    assert reply.status == 204, reply.body


def listed(runs: Attempts, job_id: str) -> list[tuple[str, str, bool]]:
    reply = runs.account.api.get(f"/buildjobs/{job_id}/tests")
    assert reply.status == 200, reply.body
    return sorted((test["testName"], test["outcome"], test["sentFromOutside"]) for test in reply.json)


def counts(runs: Attempts) -> tuple[int, int, int]:
    job = runs.job()
    return job["testsCount"], job["passedTestsCount"], job["failedTestsCount"]


def asked(runner: Caller, job_id: str) -> Reply:
    return runner.post(f"/runner/jobs/{job_id}/quarantine", {})


def test_a_test_the_build_reported_failed_stays_failed_when_it_reports_it_passed_later(attempts: Attempts) -> None:  # noqa: F811
    """The build's own failure counts for the quarantine, the job's counts and the history, whatever the attempt
    reported of that test since: a quarantined test's failure does not then let the job pass."""
    job_id, runner = quarantined_job(attempts)
    sent = runner.call("POST", f"/testresults/junit/{job_id}", raw=junit(adds="failed", divides="passed"))
    assert sent.status == 200, sent.body
    passed = [{"testName": "suite.adds", "outcome": "Passed"}, {"testName": "suite.divides", "outcome": "Failed"}]
    assert runner.call("PUT", f"/runner/jobs/{job_id}/tests", body={"tests": passed}).status == 204

    assert asked(runner, job_id).json == {"quarantined": []}
    finish(runner, job_id)

    assert counts(attempts) == (2, 0, 2)
    adds = attempts.tests()["suite.adds"]
    assert adds["recentOutcomes"].endswith("F") and adds["lastFailure"]["jobId"] == job_id
    assert adds["lastFailure"]["errorMessage"] == "it broke"


def test_an_outside_failure_of_a_quarantined_test_lets_nothing_pass(attempts: Attempts) -> None:  # noqa: F811
    """Only the key says the quarantined test failed: the build's own tests have no failure the quarantine could
    excuse, so the test_script's failure stands."""
    job_id, runner = quarantined_job(attempts)
    assert runner.post(f"/runner/jobs/{job_id}/tests", {"tests": [ADDS_PASSED]}).status == 204
    sent = attempts.account.api.call("POST", f"/testresults/junit/{job_id}", raw=junit(divides="failed"))
    assert sent.status == 200, sent.body

    assert asked(runner, job_id).json == {"quarantined": []}
    finish(runner, job_id)

    assert listed(attempts, job_id) == [("suite.adds", "Passed", False), ("suite.divides", "Failed", True)]
    history = attempts.account.api.get(
        f"{attempts.project.path}/tests/{attempts.tests()['suite.divides']['testId']}/history"
    ).json["runs"]
    assert (history[0]["jobId"], history[0]["sentFromOutside"]) == (job_id, True)
    assert not any(run["sentFromOutside"] for run in history[1:])


def test_a_build_cannot_mark_its_own_test_as_sent_from_outside(attempts: Attempts) -> None:  # noqa: F811
    """The mark is the service's: a build that sends it has its test counted as its own, failure and all."""
    job_id, runner = quarantined_job(attempts)
    tests = [
        {"testName": "suite.adds", "outcome": "Failed", SENT_FROM_OUTSIDE: True},
        {"testName": "suite.divides", "outcome": "Failed"},
    ]
    assert runner.post(f"/runner/jobs/{job_id}/tests", {"tests": tests}).status == 204

    assert asked(runner, job_id).json == {"quarantined": []}
    assert listed(attempts, job_id) == [("suite.adds", "Failed", False), ("suite.divides", "Failed", False)]


def _stored_before_issue_43(job_id: str, body: dict[str, Any]) -> None:
    """A test sent from outside as it was stored before issue 43: at the build's own item, marked."""
    name = hashlib.sha256(str(body["testName"]).encode()).hexdigest()
    JobReportModel(job_id, f"test#{name}", body={SENT_FROM_OUTSIDE: True, **body}, created=datetime.now(UTC)).save()


def test_a_test_sent_from_outside_before_issue_43_still_reads_as_sent_from_outside(attempts: Attempts) -> None:  # noqa: F811
    """Old items: listed and counted as before, marked; they excuse nothing in the quarantine; and the build's later
    update of that test is its own (it does not take the old item's fields or mark)."""
    job_id, runner = quarantined_job(attempts)
    assert runner.post(f"/runner/jobs/{job_id}/tests", {"tests": [ADDS_FAILED]}).status == 204
    _stored_before_issue_43(job_id, {"testName": "suite.divides", "outcome": "Failed", "ErrorMessage": "old"})
    _stored_before_issue_43(job_id, {"testName": "suite.other", "outcome": "Passed"})

    assert listed(attempts, job_id) == [
        ("suite.adds", "Failed", False),
        ("suite.divides", "Failed", True),
        ("suite.other", "Passed", True),
    ]
    assert asked(runner, job_id).json == {"quarantined": []}  # adds failed, and only its own failures count
    update = {"tests": [{"testName": "suite.other", "outcome": "Failed"}]}
    assert runner.call("PUT", f"/runner/jobs/{job_id}/tests", body=update).status == 204
    finish(runner, job_id)

    assert listed(attempts, job_id) == [
        ("suite.adds", "Failed", False),
        ("suite.divides", "Failed", True),
        ("suite.other", "Failed", False),
    ]
    assert counts(attempts) == (3, 0, 3)


def test_outside_uploads_cannot_use_up_the_room_the_build_has_for_its_own_reports(
    attempts: Attempts,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key fills the job with passing tests named like the build's: the build's own failure is still taken,
    stored and counted, for outside uploads draw on a quota of their own."""
    monkeypatch.setattr(job_reports, "MAX_REPORTS_PER_JOB", 3)
    job_id, runner = claimed(attempts)
    sent = attempts.account.api.call("POST", f"/testresults/junit/{job_id}", raw=junit(adds="passed", divides="passed"))
    assert sent.status == 200, sent.body
    sent = attempts.account.api.call("POST", f"/testresults/junit/{job_id}", raw=junit(other="passed"))
    assert sent.status == 200, sent.body

    own = [{"testName": "suite.adds", "outcome": "Passed"}, {"testName": "suite.divides", "outcome": "Failed"}]
    reply = runner.post(f"/runner/jobs/{job_id}/tests", {"tests": own})
    assert reply.status == 204, reply.body
    finish(runner, job_id)

    assert ("suite.divides", "Failed", False) in listed(attempts, job_id)
    assert counts(attempts) == (3, 2, 1)


def test_outside_uploads_to_a_job_are_bounded_by_their_own_quota(
    attempts: Attempts,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the outside quota a key's upload is a 409 that stores nothing, and the build reports as before."""
    monkeypatch.setattr(job_reports, "MAX_OUTSIDE_REPORTS_PER_JOB", 2, raising=False)
    job_id, runner = claimed(attempts)
    api = attempts.account.api
    assert api.call("POST", f"/testresults/junit/{job_id}", raw=junit(adds="passed")).status == 200
    refused = api.call("POST", f"/testresults/junit/{job_id}", raw=junit(divides="passed", other="passed"))
    assert refused.status == 409, refused.body
    assert "from outside" in refused.json["message"]
    own = [{"testName": f"suite.own{index}", "outcome": "Passed"} for index in range(3)]
    assert runner.post(f"/runner/jobs/{job_id}/tests", {"tests": own}).status == 204

    assert [name for name, _, outside in listed(attempts, job_id) if outside] == ["suite.adds"]


def test_outside_uploads_to_a_job_are_bounded_by_the_bytes_they_store(
    attempts: Attempts,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key's uploads of few tests with long messages stop at the outside byte cap: a 409 naming it, nothing
    stored of that upload, and the build's own reports are not held by it."""
    monkeypatch.setattr(job_reports, "MAX_OUTSIDE_REPORT_BYTES_PER_JOB", 300)
    job_id, runner = claimed(attempts)
    api = attempts.account.api
    assert api.call("POST", f"/testresults/junit/{job_id}", raw=junit(adds="passed")).status == 200
    refused = api.call("POST", f"/testresults/junit/{job_id}", raw=junit(divides="passed", other="passed"))
    assert refused.status == 409, refused.body
    assert "300 bytes" in refused.json["message"] and "from outside" in refused.json["message"]
    own = [{"testName": f"suite.own{index}", "outcome": "Passed"} for index in range(3)]
    assert runner.post(f"/runner/jobs/{job_id}/tests", {"tests": own}).status == 204

    assert [name for name, _, outside in listed(attempts, job_id) if outside] == ["suite.adds"]


def test_a_job_only_a_key_sent_tests_to_counts_them_when_it_ends(attempts: Attempts) -> None:  # noqa: F811
    job_id, runner = claimed(attempts)
    sent = attempts.account.api.call("POST", f"/testresults/junit/{job_id}", raw=junit(adds="passed"))
    assert sent.status == 200, sent.body

    finish(runner, job_id, "success")

    assert counts(attempts) == (1, 1, 0)
