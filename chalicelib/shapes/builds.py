"""A build and its jobs as AppVeyor shows them: in API responses, notification payloads and deployment webhooks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.core.builds import Build, BuildSummary
from chalicelib.core.jobs import WINDOWS_IMAGE, Executor, Job, JobCounts
from chalicelib.core.status import Status
from chalicelib.shapes.time import optional_timestamps, timestamp


def counts_json(counts: JobCounts) -> dict[str, int]:
    """A job's counts by the names AppVeyor gives them."""
    return {
        "messagesCount": counts.messages,
        "compilationMessagesCount": counts.compilation_messages,
        "compilationErrorsCount": counts.compilation_errors,
        "compilationWarningsCount": counts.compilation_warnings,
        "testsCount": counts.tests,
        "passedTestsCount": counts.passed_tests,
        "failedTestsCount": counts.failed_tests,
        "artifactsCount": counts.artifacts,
    }


def build_json(build: Build | BuildSummary, jobs: list[Job] | None = None) -> dict[str, Any]:
    """A build as every response shows it; ``jobs`` is empty in lists (as AppVeyor's history is)."""
    commit = build.commit
    shape: dict[str, Any] = {
        "buildId": build.build_id,
        "projectId": build.project_id,
        "jobs": [job_json(job) for job in jobs or []],
        "buildNumber": build.build_number,
        "version": build.version,
        "message": commit.get("message", ""),
        "branch": build.branch,
        "isTag": build.ref.startswith("refs/tags/"),
        "commitId": commit.get("commitId", ""),
        "authorName": commit.get("authorName", ""),
        "authorUsername": commit.get("authorEmail", ""),
        "committerName": commit.get("committerName", ""),
        "committerUsername": commit.get("committerEmail", ""),
        "committed": commit_time(commit["committed"]) if commit.get("committed") else None,
        "messages": build.messages,
        "status": build.status,
        "created": timestamp(build.created),
        **optional_timestamps(started=build.started, finished=build.finished, updated=build.updated),
    }
    if commit.get("messageExtended"):
        shape["messageExtended"] = commit["messageExtended"]
    if shape["isTag"]:
        shape["tag"] = build.ref.removeprefix("refs/tags/")
    if build.pull_request:
        shape["pullRequestId"] = build.pull_request["pullRequestId"]
        shape["pullRequestName"] = build.pull_request["pullRequestName"]
        for field in ("pullRequestHeadBranch", "pullRequestHeadCommitId", "pullRequestHeadRepository"):
            if build.pull_request.get(field):  # builds stored before know none; API-started ones no branch
                shape[field] = build.pull_request[field]
    return shape


def job_json(job: Job) -> dict[str, Any]:
    """A build job; beyond AppVeyor's fields, where it runs (none for a job no executor took: its messages say
    why), the build agent that took it, and, while it is queued, what it waits for (a build agent of its image), or,
    failed, why: it could not run (its image, its container), or how it ended (``exit N``, a failing command)."""
    shape = {
        "jobId": job.job_id,
        "name": job.name,
        "osType": "Windows" if WINDOWS_IMAGE.match(job.run_on or "") else "Ubuntu",  # run_on: an agent's image
        "allowFailure": job.allow_failure,
        **counts_json(job.counts),
        "status": job.status,
        "created": timestamp(job.created),
        **optional_timestamps(started=job.started, finished=job.finished, updated=job.updated),
    }
    if job.executor is not None:  # jobs of older builds, and jobs no executor took, have none
        shape["executor"] = str(job.executor)
    if job.executor == Executor.AGENT and job.agent:  # the build agent that took it (the team's own machine)
        shape["agentName"] = job.agent
    if job.message and job.status in (Status.QUEUED, Status.FAILED):
        shape["message"] = job.message  # what it waits for; or why it failed
    return shape


def commit_time(iso: str) -> str:
    """Commit times carry whole seconds: ``2014-08-14T05:41:49+00:00``."""
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
