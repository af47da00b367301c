"""The queues' messages, typed: what each says, and its body (ids only, as JSON) as it travels.

The bodies are the ones the queues carried before the messages had types, so messages in flight across an
upgrade still read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunJob:
    """Jobs queue: a build job to hand to its executor."""

    job_id: str


@dataclass(frozen=True)
class RunDeploymentJob:
    """Deployments queue: a deployment job for the service's own providers to deliver."""

    job_id: str


@dataclass(frozen=True)
class AgentDeadline:
    """Deployments queue, delayed: an agent's deployment job whose time to be taken is up."""

    job_id: str


@dataclass(frozen=True)
class Announce:
    """Notifications queue: a build or a deployment (one of the two ids) reached a final status at ``revision``."""

    project_id: int
    revision: int
    build_id: int | None = None
    deployment_id: int | None = None


@dataclass(frozen=True)
class ReportStatus:
    """Notifications queue: post a build's state on its commit at the forge (``attempt``: the tries before)."""

    project_id: int
    build_id: int
    attempt: int = 0
    state: str | None = None  # on a try again, the state that failed: a newer state has a message of its own


@dataclass(frozen=True)
class StartScheduledBuild:
    """Notifications queue: start the build of a project's scheduled run, due at ``run_at`` (epoch seconds), which
    the tick claimed; the project is named by its key and its id (a project made again under the slug is another)."""

    account_id: int
    project_id: int
    slug: str
    run_at: int


Message = RunJob | RunDeploymentJob | AgentDeadline | Announce | ReportStatus | StartScheduledBuild


class NotAMessage(ValueError):
    """A body that is none of the messages its queue carries."""


def body_of(message: Message) -> dict[str, Any]:
    if isinstance(message, RunJob | RunDeploymentJob):
        return {"jobId": message.job_id}
    if isinstance(message, AgentDeadline):
        return {"jobId": message.job_id, "agentDeadline": True}
    if isinstance(message, ReportStatus):
        status = {"projectId": message.project_id, "buildId": message.build_id, "commitStatus": message.attempt}
        return status | ({"state": message.state} if message.state else {})
    if isinstance(message, StartScheduledBuild):
        return {
            "accountId": message.account_id,
            "projectId": message.project_id,
            "slug": message.slug,
            "scheduledRun": message.run_at,
        }
    body: dict[str, Any] = {"projectId": message.project_id, "revision": message.revision}
    if message.build_id is not None:
        body["buildId"] = message.build_id
    if message.deployment_id is not None:
        body["deploymentId"] = message.deployment_id
    return body


def job_message(body: Any) -> RunJob:
    """A jobs queue body."""
    return RunJob(_job_id(body))


def deployment_message(body: Any) -> RunDeploymentJob | AgentDeadline:
    """A deployments queue body."""
    job_id = _job_id(body)
    return AgentDeadline(job_id) if body.get("agentDeadline") else RunDeploymentJob(job_id)


def notification_message(body: Any) -> Announce | ReportStatus | StartScheduledBuild:
    """A notifications queue body: an announcement, a commit status to post, or a scheduled build to start."""
    if isinstance(body, dict) and "scheduledRun" in body:
        return _scheduled_run(body)
    if not isinstance(body, dict) or "commitStatus" not in body:
        return announcement(body)
    try:
        state = None if body.get("state") is None else str(body["state"])
        return ReportStatus(int(body["projectId"]), int(body["buildId"]), int(body["commitStatus"]), state)
    except (KeyError, TypeError, ValueError) as error:
        raise NotAMessage(str(error)) from error


def announcement(body: Any) -> Announce:
    """A notifications queue body announcing a finished build or deployment."""
    if not isinstance(body, dict):
        raise NotAMessage("not an object")
    try:
        build_id, deployment_id = body.get("buildId"), body.get("deploymentId")
        if (build_id is None) == (deployment_id is None):
            raise NotAMessage("names neither a build nor a deployment, or both")
        return Announce(
            project_id=int(body["projectId"]),
            revision=int(body["revision"]),
            build_id=None if build_id is None else int(build_id),
            deployment_id=None if deployment_id is None else int(deployment_id),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise NotAMessage(str(error)) from error


def _scheduled_run(body: dict[str, Any]) -> StartScheduledBuild:
    try:
        slug = body["slug"]
        if not isinstance(slug, str) or not slug:
            raise NotAMessage("no slug")
        return StartScheduledBuild(int(body["accountId"]), int(body["projectId"]), slug, int(body["scheduledRun"]))
    except (KeyError, TypeError, ValueError) as error:
        raise NotAMessage(str(error)) from error


def _job_id(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("jobId"), str) or not body["jobId"]:
        raise NotAMessage("no jobId")
    return str(body["jobId"])
