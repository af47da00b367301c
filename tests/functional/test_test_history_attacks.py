"""Attacks on per-test history and quarantine (review of issue 38): who may make a test flaky, and so hide its
failures once quarantine is on."""

from __future__ import annotations

from tests.functional.test_test_history import Attempts, attempts, junit, quarantine_asked  # noqa: F401 (fixture)
from tests.functional.test_untrusted_build_attacks import builder, member_of_role  # noqa: F401 (fixture)
from tests.runners import dispatch
from tests.support import Caller


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
