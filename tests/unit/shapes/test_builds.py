"""A build and its jobs as every response shows them: no IO."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Executor, Job
from chalicelib.shapes.builds import build_json, commit_time, job_json

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
COMMIT = {
    "commitId": "a" * 40,
    "message": "work",
    "authorEmail": "ada@example.com",
    "committed": "2026-03-04T06:06:07+01:00",
}
BUILD = Build(1, 2, 3, 4, "1.0.4", "main", "refs/heads/main", COMMIT, {}, ["job-1"], "success", NOW)
JOB = Job("job-1", 3, 2, 1, 1, "Image: Ubuntu", {}, False, "queued", NOW)


def test_a_tag_build_says_so_and_names_its_tag() -> None:
    shown = build_json(replace(BUILD, ref="refs/tags/v1.0"))

    assert (shown["isTag"], shown["tag"]) == (True, "v1.0")
    assert "tag" not in build_json(BUILD) and build_json(BUILD)["isTag"] is False


def test_the_commit_shows_its_author_and_its_time_in_whole_seconds_in_utc() -> None:
    shown = build_json(BUILD)

    assert (shown["authorUsername"], shown["committed"]) == ("ada@example.com", "2026-03-04T05:06:07+00:00")
    assert commit_time("2026-03-04T05:06:07.123456+00:00") == "2026-03-04T05:06:07+00:00"


def test_a_pull_request_build_names_its_pull_request() -> None:
    pull_request = {"pullRequestId": 7, "pullRequestName": "Fix", "pullRequestHeadBranch": "fix"}

    shown = build_json(replace(BUILD, pull_request=pull_request))

    assert (shown["pullRequestId"], shown["pullRequestName"], shown["pullRequestHeadBranch"]) == (7, "Fix", "fix")
    assert "pullRequestHeadCommitId" not in shown


def test_a_queued_job_says_what_it_waits_for_and_a_running_one_does_not() -> None:
    waiting = replace(JOB, message="Waiting for a build agent of 'win'.", executor=Executor.AGENT, agent="win-01")

    assert job_json(waiting)["message"] == "Waiting for a build agent of 'win'."
    assert (job_json(waiting)["executor"], job_json(waiting)["agentName"]) == (str(Executor.AGENT), "win-01")
    assert "message" not in job_json(replace(waiting, status="running"))
    assert "executor" not in job_json(JOB)  # a job of an older build, or one no executor took


def test_lists_show_a_build_without_its_jobs() -> None:
    assert build_json(BUILD)["jobs"] == []
    assert [job["jobId"] for job in build_json(BUILD, [JOB])["jobs"]] == ["job-1"]
