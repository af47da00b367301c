"""Per-test history, flakiness and quarantine (issue 38), without a pump: a build's job is claimed as dispatch does,
its runner's calls are played through the test client (a results file, then its finish), and a re-run of what
failed claims it again."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.api import tests_history as test_history_views
from chalicelib.store import tests_history as history_store
from tests.awscalls import dynamodb_calls
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.runners import dispatch
from tests.support import Account, Caller, Reply, unique, view_answer


def junit(**outcomes: str) -> bytes:
    """A JUnit file of tests in class ``suite``, each passed or failed as named."""
    cases = "".join(
        f'<testcase classname="suite" name="{name}" time="0.{index + 1:03d}">'
        + ('<failure message="it broke">trace</failure>' if outcome == "failed" else "")
        + "</testcase>"
        for index, (name, outcome) in enumerate(outcomes.items())
    )
    return f'<testsuite name="suite">{cases}</testsuite>'.encode()


class Attempts:
    """A project whose one job is run attempt by attempt: claimed, given a results file, finished."""

    def __init__(self, account: Account, git_server: GitServer, api_url: str) -> None:
        self.account, self.api_url = account, api_url
        self.project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo")})
        self.build: dict[str, Any] = {}

    def start(self) -> str:
        """A new build of the same commit; its job's id."""
        self.build = self.project.start()
        return str(self.project.build(self.build["version"])["jobs"][0]["jobId"])

    def attempt(self, job_id: str, results: bytes, result: str) -> Reply:
        """Claim the job, upload ``results`` with its token, finish it ``result``; the finish's reply."""
        token = dispatch(job_id, self.api_url).token
        runner = Caller(self.account.client, None, authorization=f"Bearer {token}")
        sent = runner.call("POST", f"/testresults/junit/{job_id}", raw=results, headers={"Content-Type": "text/xml"})
        assert sent.status == 200, sent.body
        body = {"result": result, "message": None, "logChunks": 0, "artifacts": []}
        return runner.post(f"/runner/jobs/{job_id}/finish", body)

    def rerun_incomplete(self) -> None:
        reply = self.account.api.put("/builds", {"buildId": self.build["buildId"], "reRunIncomplete": True})
        assert reply.status == 200, reply.body

    def tests(self, sort: str = "name") -> dict[str, dict[str, Any]]:
        reply = self.account.api.get(f"{self.project.path}/tests?sort={sort}")
        assert reply.status == 200, reply.body
        return {test["testName"]: test for test in reply.json["tests"]}

    def job(self) -> dict[str, Any]:
        return dict(self.project.build(self.build["version"])["jobs"][0])


@pytest.fixture
def attempts(account: Account, git_server: GitServer, api_url: str) -> Attempts:
    return Attempts(account, git_server, api_url)


def test_a_test_failing_then_passing_on_a_rerun_of_the_same_commit_is_flaky(attempts: Attempts) -> None:
    job_id = attempts.start()
    assert attempts.attempt(job_id, junit(adds="passed", divides="failed"), "failed").status == 204
    attempts.rerun_incomplete()

    assert attempts.attempt(job_id, junit(adds="passed", divides="passed"), "success").status == 204

    tests = attempts.tests()
    assert tests["suite.divides"]["flaky"] is True
    assert tests["suite.adds"]["flaky"] is False
    assert (tests["suite.divides"]["runs"], tests["suite.divides"]["failures"]) == (2, 1)
    assert tests["suite.divides"]["recentOutcomes"] == "FP"
    assert tests["suite.divides"]["failureRate"] == 0.5
    assert tests["suite.divides"]["lastFailure"]["attempt"] == 1
    history = attempts.account.api.get(f"{attempts.project.path}/tests/{tests['suite.divides']['testId']}/history").json
    assert [(run["attempt"], run["outcome"]) for run in history["runs"]] == [(2, "Passed"), (1, "Failed")]
    assert {run["jobId"] for run in history["runs"]} == {job_id}
    assert history["runs"][1]["errorMessage"] == "it broke"


def test_a_test_failing_on_one_commit_and_passing_on_another_is_not_flaky(
    attempts: Attempts, git_server: GitServer
) -> None:
    assert attempts.attempt(attempts.start(), junit(divides="failed"), "failed").status == 204
    attempts.project.repository.commit({"README": unique("change")})

    assert attempts.attempt(attempts.start(), junit(divides="passed"), "success").status == 204

    assert attempts.tests()["suite.divides"]["flaky"] is False


def test_the_tests_list_sorts_by_slowest_failing_and_flaky(attempts: Attempts) -> None:
    job_id = attempts.start()
    attempts.attempt(job_id, junit(a_fast="passed", b_broken="failed", c_slow="passed", d_flaky="failed"), "failed")
    attempts.rerun_incomplete()
    attempts.attempt(job_id, junit(a_fast="passed", b_broken="failed", c_slow="passed", d_flaky="passed"), "failed")

    slowest = list(attempts.tests("slowest"))
    failing = list(attempts.tests("failing"))
    flaky = list(attempts.tests("flaky"))

    assert slowest[0] == "suite.d_flaky"  # time 0.004, the last in the file
    assert failing[0] == "suite.b_broken"
    assert flaky[0] == "suite.d_flaky"
    assert attempts.account.api.get(f"{attempts.project.path}/tests?sort=random").status == 400


def test_the_tests_list_of_1000_tests_with_100_runs_each_is_two_dynamodb_calls(attempts: Attempts) -> None:
    """The read is a Query of small summaries whatever the runs: seeded straight into the store (1,000 tests by
    100 job finishes would take minutes), in the shape job finishes write."""
    from tests.history_seed import seed_tests

    project_id = attempts.project.project["projectId"]
    seed_tests(project_id, tests=1000, runs=100)
    path = f"{attempts.project.path}/tests?sort=slowest"
    assert attempts.account.api.get(path).status == 200  # warm: the key's lookup is cached, as a warm function's

    with dynamodb_calls() as calls:
        reply = attempts.account.api.get(path)

    assert reply.status == 200
    assert len(reply.json["tests"]) == 1000
    assert len(calls) <= 3, calls
    assert "Scan" not in calls
    assert len(history_store.quarantine_and_summaries(project_id)[1]) == 1000


def test_one_tests_history_is_at_most_three_dynamodb_calls(attempts: Attempts) -> None:
    job_id = attempts.start()
    attempts.attempt(job_id, junit(divides="failed"), "failed")
    test_id = attempts.tests()["suite.divides"]["testId"]
    path = f"{attempts.project.path}/tests/{test_id}/history"
    attempts.account.api.get(path)

    with dynamodb_calls() as calls:
        reply = attempts.account.api.get(path)

    assert reply.status == 200 and len(reply.json["runs"]) == 1
    assert len(calls) <= 3, calls
    assert attempts.account.api.get(f"{attempts.project.path}/tests/{'0' * 24}/history").status == 404


def make_flaky(attempts: Attempts) -> tuple[str, str]:
    """``suite.divides`` flaky (failed, then passed on a re-run of the same commit); its job's id and test id."""
    job_id = attempts.start()
    attempts.attempt(job_id, junit(adds="passed", divides="failed"), "failed")
    attempts.rerun_incomplete()
    attempts.attempt(job_id, junit(adds="passed", divides="passed"), "success")
    return job_id, attempts.tests()["suite.divides"]["testId"]


def quarantine_asked(attempts: Attempts, results: bytes) -> Reply:
    """A new build's job reports ``results``; what its runner is told when its test_script fails."""
    job_id = attempts.start()
    token = dispatch(job_id, attempts.api_url).token
    runner = Caller(attempts.account.client, None, authorization=f"Bearer {token}")
    assert runner.call("POST", f"/testresults/junit/{job_id}", raw=results).status == 200
    return runner.post(f"/runner/jobs/{job_id}/quarantine", {})


def test_a_failure_outside_the_quarantine_still_fails_its_job(attempts: Attempts) -> None:
    make_flaky(attempts)
    attempts.account.api.put(f"{attempts.project.path}/tests/quarantine", {"enabled": True})

    reply = quarantine_asked(attempts, junit(adds="failed", divides="failed"))

    assert reply.status == 200, reply.body
    assert reply.json == {"quarantined": []}


def test_quarantine_is_off_until_a_project_turns_it_on(attempts: Attempts) -> None:
    make_flaky(attempts)

    reply = quarantine_asked(attempts, junit(adds="passed", divides="failed"))

    assert reply.json == {"quarantined": []}
    assert attempts.tests()["suite.divides"]["quarantined"] is False


def test_a_test_cleared_from_quarantine_by_hand_fails_its_job_again(attempts: Attempts) -> None:
    _, test_id = make_flaky(attempts)
    path = f"{attempts.project.path}/tests/quarantine"
    assert attempts.account.api.put(path, {"enabled": True}).json["tests"][0]["testId"] == test_id
    assert quarantine_asked(attempts, junit(divides="failed")).json == {"quarantined": ["suite.divides"]}

    cleared = attempts.account.api.delete(f"{path}/{test_id}")

    assert cleared.status == 200 and cleared.json == {"enabled": True, "tests": []}, cleared.body
    assert attempts.tests()["suite.divides"]["flaky"] is False
    assert quarantine_asked(attempts, junit(divides="failed")).json == {"quarantined": []}


def test_quarantine_takes_only_true_or_false(attempts: Attempts) -> None:
    reply = attempts.account.api.put(f"{attempts.project.path}/tests/quarantine", {"enabled": "yes"})

    assert reply.status == 400 and "enabled" in reply.json["message"]
    assert attempts.account.api.get(f"{attempts.project.path}/tests/quarantine").json == {
        "enabled": False,
        "tests": [],
    }
    names = {"accountName": attempts.account.name, "projectSlug": attempts.project.project["slug"]}
    assert view_answer(attempts.account, test_history_views.get_test_quarantine, "/quarantine", **names) == {
        "enabled": False,
        "tests": [],
    }


@pytest.mark.parametrize("untrusted", ["pull request", "a builder's variables"])
def test_a_pull_requests_build_cannot_make_a_test_flaky_to_quarantine_it(attempts: Attempts, untrusted: str) -> None:
    """A fork's pull request builds code its author wrote and uploads results its author chose, and so does a build
    started with variables by someone who may not change the project: reporting a test failed then passed on one
    commit must not flag it flaky, which with quarantine on would hide its real failures on the project's own
    branches."""
    from chalicelib.domain.projects.request_variables import UNTRUSTED_FLAG
    from chalicelib.store.models import BuildModel

    attempts.account.api.put(f"{attempts.project.path}/tests/quarantine", {"enabled": True})
    job_id = attempts.start()
    stored = BuildModel.get(attempts.project.project["projectId"], attempts.build["buildId"])
    if untrusted == "pull request":
        stored.update(actions=[BuildModel.pull_request.set({"pullRequestId": 7, "pullRequestName": "innocent"})])
    else:
        stored.update(actions=[BuildModel.flags.set({**(stored.flags or {}), UNTRUSTED_FLAG: True})])
    attempts.attempt(job_id, junit(divides="failed"), "failed")
    attempts.rerun_incomplete()

    attempts.attempt(job_id, junit(divides="passed"), "success")

    assert attempts.tests() == {}
    assert attempts.account.api.get(f"{attempts.project.path}/tests/quarantine").json["tests"] == []
    assert quarantine_asked(attempts, junit(divides="failed")).json == {"quarantined": []}


def test_a_job_of_many_tests_records_each_of_them(attempts: Attempts) -> None:
    """More tests than one transaction (50) or one batch read (100) holds."""
    many = {f"case_{index:03d}": "failed" if index % 40 == 0 else "passed" for index in range(230)}

    assert attempts.attempt(attempts.start(), junit(**many), "failed").status == 204

    tests = attempts.tests()
    assert len(tests) == 230
    assert sum(test["failures"] for test in tests.values()) == 6
    assert all(test["runs"] == 1 for test in tests.values())
