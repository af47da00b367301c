"""Build shapes: the Build, its BuildJobs, artifacts; and the start-build body."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.domain.builds import StartRequest
from chalicelib.domain.validation import invalid
from chalicelib.wire.fields import Fields, bounded_variables
from chalicelib.wire.time import optional_timestamps, timestamp

COUNTS = (
    "messagesCount",
    "compilationMessagesCount",
    "compilationErrorsCount",
    "compilationWarningsCount",
    "testsCount",
    "passedTestsCount",
    "failedTestsCount",
    "artifactsCount",
)


def build_json(build: Build, jobs: list[Job] | None = None) -> dict[str, Any]:
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
    return shape


def job_json(job: Job) -> dict[str, Any]:
    return {
        "jobId": job.job_id,
        "name": job.name,
        "osType": "Ubuntu",
        "allowFailure": job.allow_failure,
        **{name: int(job.counts.get(name, 0)) for name in COUNTS},
        "status": job.status,
        "created": timestamp(job.created),
        **optional_timestamps(started=job.started, finished=job.finished, updated=job.updated),
    }


def commit_time(iso: str) -> str:
    """Commit times carry whole seconds: ``2014-08-14T05:41:49+00:00``."""
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def artifact_json(artifact: dict[str, Any]) -> dict[str, Any]:
    return {key: artifact[key] for key in ("fileName", "name", "type", "size", "created")}


def parse_start_request(body: Any) -> StartRequest:
    """POST /api/builds: the three forms share one body; it may also arrive form-encoded."""
    fields = Fields(body)
    variables = body.get("environmentVariables") if isinstance(body, dict) else None
    if variables is None:
        variables = {}
    if not isinstance(variables, dict) or not all(
        isinstance(name, str) and name and isinstance(value, str | int | float | bool)
        for name, value in variables.items()
    ):
        raise invalid("environmentVariables", "environmentVariables must be an object of names to string values.")
    pull_request = body.get("pullRequestId") if isinstance(body, dict) else None
    return StartRequest(
        account_name=fields.text("accountName"),
        project_slug=fields.text("projectSlug"),
        branch=fields.optional_text("branch") or None,
        commit_id=fields.optional_text("commitId") or None,
        pull_request_id=None if pull_request in (None, "") else fields.identifier("pullRequestId"),
        environment_variables=bounded_variables(
            "environmentVariables", {name: _text(value) for name, value in variables.items()}
        ),
    )


def form_body(text: str) -> dict[str, Any]:
    """A form-encoded start request as the JSON body it stands for (``environmentVariables[NAME]=value`` too)."""
    body: dict[str, Any] = {}
    variables: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True):
        if name.startswith("environmentVariables[") and name.endswith("]"):
            variables[name[len("environmentVariables[") : -1]] = value
        else:
            body[name] = value
    if variables:
        body["environmentVariables"] = variables
    return body


def _text(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
