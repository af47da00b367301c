"""The APPVEYOR_* variables a job's scripts see: no IO."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.domain.builds.job_environment import appveyor_variables

NOW = datetime(2026, 1, 2, tzinfo=UTC)
PROJECT = Project(1, "acme", 2, "app", "App", "gitHub", "git", "acme/app", "hook", "1.0.{build}", {}, NOW)
COMMIT = {"commitId": "c" * 40, "authorName": "Ada", "message": "Ship it"}
BUILD = Build(1, 2, 3, 7, "1.0.7", "main", "refs/heads/main", COMMIT, {}, ["job-1"], "running", NOW)
JOB = Job("job-1", 3, 2, 1, 1, "Image: Ubuntu", {"configuration": "Release"}, False, "running", NOW)


def test_a_branch_build_says_what_it_builds_and_where() -> None:
    variables = appveyor_variables(PROJECT, BUILD, JOB, Path("/projects/app"))

    assert variables["APPVEYOR_BUILD_VERSION"] == "1.0.7" and variables["APPVEYOR_REPO_BRANCH"] == "main"
    assert (variables["APPVEYOR_REPO_TAG"], variables["APPVEYOR_BUILD_FOLDER"]) == ("false", "/projects/app")
    assert (variables["APPVEYOR_BUILD_WORKER_IMAGE"], variables["CONFIGURATION"]) == ("Ubuntu", "Release")
    assert "APPVEYOR_FORCED_BUILD" not in variables and "APPVEYOR_PULL_REQUEST_NUMBER" not in variables


def test_a_tag_build_names_its_tag_and_a_pull_request_its_heads_commit() -> None:
    pull_request = {"pullRequestId": 9, "pullRequestName": "Fix", "pullRequestHeadCommitId": "h" * 40}

    tagged = appveyor_variables(PROJECT, replace(BUILD, ref="refs/tags/v1.0.7"), JOB, None)
    proposed = appveyor_variables(PROJECT, replace(BUILD, pull_request=pull_request), JOB, None)

    assert (tagged["APPVEYOR_REPO_TAG"], tagged["APPVEYOR_REPO_TAG_NAME"]) == ("true", "v1.0.7")
    assert "APPVEYOR_BUILD_FOLDER" not in tagged  # a runner sets its own
    assert proposed["APPVEYOR_PULL_REQUEST_NUMBER"] == "9"
    assert proposed["APPVEYOR_PULL_REQUEST_HEAD_COMMIT"] == "h" * 40


def test_a_build_started_through_the_api_or_the_schedule_says_so() -> None:
    variables = appveyor_variables(PROJECT, replace(BUILD, flags={"forced": True, "scheduled": True}), JOB, None)

    assert (variables["APPVEYOR_FORCED_BUILD"], variables["APPVEYOR_SCHEDULED_BUILD"]) == ("True", "True")
