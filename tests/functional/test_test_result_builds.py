"""Test results through real builds: pytest's --junitxml uploaded with curl to the job's own Build Worker API, with
no key, and what the project's tests then show (issue 38)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest as pytest_module

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account

# the venv's pytest, run by the sandbox's python3 (the same minor version): the build's user cannot run the venv's
# interpreter, which lives below a home folder, but may read its site-packages below the work tree
SITE_PACKAGES = Path(pytest_module.__file__).resolve().parents[1]
TEST_MATH = """\
def test_adds():
    assert 1 + 1 == 2

def test_divides():
    assert 7 / 2 == 3, "7 / 2 is not 3"
"""
UPLOAD = 'curl -sS -f -F "file=@results.xml" "$APPVEYOR_API_URL/api/testresults/junit/$APPVEYOR_JOB_ID"'


def pytest_yml(*after: str) -> str:
    return appveyor_yml(
        "build: off",
        "test_script:",
        f"  - PYTHONPATH={SITE_PACKAGES} python3 -m pytest -q -p no:cacheprovider --junitxml=results.xml || true",
        f"  - {UPLOAD}",
        *after,
    )


def job_tests(account: Account, job_id: str) -> dict[str, dict[str, Any]]:
    reply = account.api.get(f"/buildjobs/{job_id}/tests")
    assert reply.status == 200, reply.body
    return {test["testName"]: test for test in reply.json}


def test_a_build_uploads_pytests_junitxml_with_curl_to_its_worker_api_without_a_key(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"test_math.py": TEST_MATH, "appveyor.yml": pytest_yml()})

    build = project.run()

    (job,) = build["jobs"]
    log = project.log(job["jobId"])
    assert build["status"] == "success", log
    assert (job["testsCount"], job["passedTestsCount"], job["failedTestsCount"]) == (2, 1, 1), log
    tests = job_tests(account, job["jobId"])
    assert {name: test["outcome"] for name, test in tests.items()} == {
        "test_math.test_adds": "Passed",
        "test_math.test_divides": "Failed",
    }
    assert all(isinstance(test["durationMilliseconds"], int) for test in tests.values())
    assert "7 / 2 is not 3" in tests["test_math.test_divides"]["ErrorMessage"]
    assert "Test results (junit): 2 tests." in log


FLAKY_TESTS = """\
import os

def test_stable():
    assert True

def test_flaky():
    assert os.environ.get("APPVEYOR_RE_RUN_INCOMPLETE") == "True", "fails but on a re-run"
"""
ON_FINISH_YML = appveyor_yml(
    "build: off",
    "test_script:",
    f"  - PYTHONPATH={SITE_PACKAGES} python3 -m pytest -q -p no:cacheprovider --junitxml=results.xml",
    "on_finish:",
    f"  - {UPLOAD}",
)


def test_a_test_failing_then_passing_on_rerun_is_flaky_and_quarantine_keeps_its_next_failure_green(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"test_flaky.py": FLAKY_TESTS, "appveyor.yml": ON_FINISH_YML})
    first = project.run()
    assert first["status"] == "failed", project.log(first["jobs"][0]["jobId"])
    rerun = account.api.put("/builds", {"buildId": first["buildId"], "reRunIncomplete": True})
    assert rerun.status == 200, rerun.body
    again = project.wait(first["version"])
    assert again["status"] == "success", project.log(again["jobs"][0]["jobId"])
    tests = {test["testName"]: test for test in account.api.get(f"{project.path}/tests").json["tests"]}
    assert tests["test_flaky.test_flaky"]["flaky"] is True
    assert tests["test_flaky.test_stable"]["flaky"] is False
    enabled = account.api.put(f"{project.path}/tests/quarantine", {"enabled": True})
    assert [test["testName"] for test in enabled.json["tests"]] == ["test_flaky.test_flaky"], enabled.body

    quarantined = project.run()

    (job,) = quarantined["jobs"]
    log = project.log(job["jobId"])
    assert quarantined["status"] == "success", log
    assert "Quarantined flaky tests failed: test_flaky.test_flaky" in log
    messages = account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    assert any("test_flaky.test_flaky" in message["message"] for message in messages), messages
    assert job_tests(account, job["jobId"])["test_flaky.test_flaky"]["outcome"] == "Failed"


INLINE_UPLOAD_YML = appveyor_yml(
    "build: off",
    "test_script:",  # results sent within test_script: a quarantined failure lets the job go on
    f"  - PYTHONPATH={SITE_PACKAGES} python3 -m pytest -q -p no:cacheprovider --junitxml=results.xml; s=$?; "
    + UPLOAD
    + "; (exit $s)",
    "after_test:",
    "  - echo after_test ran",
)


def test_a_quarantined_failure_reported_within_test_script_lets_the_job_go_on_to_after_test(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"test_flaky.py": FLAKY_TESTS, "appveyor.yml": INLINE_UPLOAD_YML})
    first = project.run()
    assert first["status"] == "failed", project.log(first["jobs"][0]["jobId"])
    assert account.api.put("/builds", {"buildId": first["buildId"], "reRunIncomplete": True}).status == 200
    assert project.wait(first["version"])["status"] == "success"
    assert account.api.put(f"{project.path}/tests/quarantine", {"enabled": True}).json["tests"]

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert "Quarantined flaky tests failed: test_flaky.test_flaky. They do not fail the job: the job goes on." in log
    assert "after_test ran" in log


HOSTILE = {
    "laughs.xml": '<?xml version="1.0"?>\n<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>\n<testsuite name="l"><testcase classname="x" name="&c;"/></testsuite>\n',
    "xxe.xml": '<?xml version="1.0"?>\n<!DOCTYPE t [<!ENTITY s SYSTEM "file:///etc/passwd">]>\n'
    '<testsuite name="t"><testcase classname="x" name="leak"><failure message="&s;"/></testcase></testsuite>\n',
}


def test_a_builds_hostile_results_files_are_refused_by_its_worker_api_and_store_nothing(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    send = 'curl -s -o /dev/null -w "{name} HTTP %{{http_code}}\\n" -F "file=@{name}" '
    send += '"${{APPVEYOR_API_URL}}api/testresults/junit/$APPVEYOR_JOB_ID"'
    yml = appveyor_yml("build: off", "test_script:", *(f"  - {send.format(name=name)}" for name in HOSTILE))
    project = BuildProject(account, git_server, {**HOSTILE, "appveyor.yml": yml})

    build = project.run()

    (job,) = build["jobs"]
    log = project.log(job["jobId"])
    assert "laughs.xml HTTP 400" in log and "xxe.xml HTTP 400" in log, log
    assert job_tests(account, job["jobId"]) == {}
    assert "root:" not in log
