"""What notifications say: e-mail subjects and bodies, and the webhook payload in AppVeyor's shape."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment
from chalicelib.core.jobs import Job, JobArtifact
from chalicelib.core.projects import Project
from chalicelib.core.repository_names import without_credentials
from chalicelib.shapes.builds import counts_json
from chalicelib.shapes.time import timestamp
from chalicelib.store import blobs
from chalicelib.store.artifacts import ArtifactChanged, artifact_url

ARTIFACT_URL_SECONDS = 600  # the payload's download links last 10 minutes, as AppVeyor's do
MAX_ARTIFACTS_PER_JOB = 50  # each one's URL costs an S3 call; the handler's time is bounded


def _link(path: str) -> str:
    """``path`` on the service's base URL when one is set (CONVEYOR_BASE_URL), else the path alone."""
    return f"{(settings().base_url or '').rstrip('/')}{path}"


def build_link(project: Project, build: Build) -> str:
    return _link(f"/api/projects/{project.account_name}/{project.slug}/build/{quote(build.version, safe='')}")


def deployment_link(deployment: Deployment) -> str:
    return _link(f"/api/deployments/{deployment.deployment_id}")


def _verb(status: str) -> str:
    return {"success": "completed", "failed": "failed", "cancelled": "was cancelled"}.get(status, status)


def build_subject(project: Project, build: Build) -> str:
    """``Build my-project 1.0.12 completed`` (or ``failed``), as AppVeyor's subjects read."""
    return f"Build {project.name} {build.version} {_verb(build.status)}"


def build_body(project: Project, build: Build) -> str:
    """The plain-text e-mail of a finished build."""
    commit = build.commit
    lines = [
        f"Build {project.name} {build.version} {_verb(build.status)}.",
        "",
        f"Project:  {project.name} ({project.account_name}/{project.slug})",
        f"Version:  {build.version}",
        f"Branch:   {build.branch}",
        f"Commit:   {str(commit.get('commitId', ''))[:12]} by {commit.get('authorName', '')}",
        f"Message:  {commit.get('message', '')}",
        f"Status:   {build.status}",
        f"Duration: {_duration(build.started, build.finished)}",
        "",
        build_link(project, build),
    ]
    return "\n".join(lines) + "\n"


def deployment_subject(project: Project, build: Build, deployment: Deployment) -> str:
    """``Deployment of my-project 1.0.12 to staging completed`` (or ``failed``)."""
    environment = deployment.environment.name
    return f"Deployment of {project.name} {build.version} to {environment} {_verb(deployment.status)}"


def deployment_body(project: Project, build: Build, deployment: Deployment) -> str:
    """The plain-text e-mail of a finished deployment."""
    lines = [
        f"{deployment_subject(project, build, deployment)}.",
        "",
        f"Project:     {project.name} ({project.account_name}/{project.slug})",
        f"Version:     {build.version}",
        f"Branch:      {build.branch}",
        f"Environment: {deployment.environment.name}",
        f"Status:      {deployment.status}",
        "",
        deployment_link(deployment),
    ]
    return "\n".join(lines) + "\n"


def build_event(project: Project, build: Build, jobs: list[Job]) -> dict[str, Any]:
    """``{eventName, eventData}``: what a Webhook notification receives for a finished build."""
    commit = build.commit
    data: dict[str, Any] = {
        "passed": build.status == "success",
        "failed": build.status != "success",
        "status": build.status.capitalize(),
        "started": _optional_timestamp(build.started),
        "finished": _optional_timestamp(build.finished),
        "duration": _duration(build.started, build.finished),
        "accountName": project.account_name,
        "projectId": project.project_id,
        "projectName": project.name,
        "projectSlug": project.slug,
        "buildId": build.build_id,
        "buildNumber": build.build_number,
        "buildVersion": build.version,
        "repositoryProvider": project.repository_type,
        "repositoryScm": project.repository_scm,
        "repositoryName": without_credentials(project.repository_name)[0],
        "branch": build.branch,
        "commitId": commit.get("commitId", ""),
        "commitAuthor": commit.get("authorName", ""),
        "commitAuthorEmail": commit.get("authorEmail", ""),
        "commitDate": commit.get("committed", ""),
        "commitMessage": commit.get("message", ""),
        "commitMessageExtended": commit.get("messageExtended") or "",
        "committerName": commit.get("committerName", ""),
        "committerEmail": commit.get("committerEmail", ""),
        "isPullRequest": build.pull_request is not None,
        "pullRequestId": (build.pull_request or {}).get("pullRequestId"),
        "pullRequestTitle": (build.pull_request or {}).get("pullRequestName"),
        "buildUrl": build_link(project, build),
        "messages": build.messages,
        "jobs": [_job(build, job) for job in jobs],
    }
    return {"eventName": "build_success" if build.status == "success" else "build_failure", "eventData": data}


def _job(build: Build, job: Job) -> dict[str, Any]:
    messages = [] if not job.message else [{"category": _category(job.status), "message": job.message}]
    return {
        "id": job.job_id,
        "name": job.name,
        "allowFailure": job.allow_failure,
        **counts_json(job.counts),
        "status": job.status.capitalize(),
        "started": _optional_timestamp(job.started),
        "finished": _optional_timestamp(job.finished),
        "duration": _duration(job.started, job.finished),
        "messages": messages,
        "compilationMessages": [],
        "artifacts": [_artifact(build, job, artifact) for artifact in job.artifacts[:MAX_ARTIFACTS_PER_JOB]],
    }


def _artifact(build: Build, job: Job, artifact: JobArtifact) -> dict[str, Any]:
    file_name = artifact.file_name
    prefix = blobs.prefix_of(job)
    try:
        url = artifact_url(prefix, file_name, ARTIFACT_URL_SECONDS, artifact.etag)
    except (ValueError, ArtifactChanged):  # no artifact key, or changed since its job: nothing to download
        url = None
    return {
        "fileName": file_name,
        "name": artifact.name,
        "type": artifact.type,
        "size": artifact.size,
        "url": url,
        "permalink": _link(f"/api/buildjobs/{job.job_id}/artifacts/{quote(file_name)}"),
    }


def _category(status: str) -> str:
    return "information" if status == "success" else "error"


def _optional_timestamp(moment: datetime | None) -> str | None:
    return timestamp(moment) if moment is not None else None


def _duration(started: datetime | None, finished: datetime | None) -> str:
    """``00:01:02.5000000``, a .NET TimeSpan as AppVeyor's payloads show durations."""
    if started is None or finished is None:
        return "00:00:00"
    seconds = max(0.0, (finished - started).total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    return f"{int(hours):02d}:{int(minutes):02d}:{rest:010.7f}"
