"""The queues' messages, typed: what each says, and its body (ids only, as JSON) as it travels.

The bodies are the ones the queues carried before the messages had types, so messages in flight across an
upgrade still read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class RunJob(FieldsRepr):
    """Jobs queue: a build job to hand to its executor; with its build's keys, which a first send knows (its
    dispatch then reads the job and the build at once), a sweeper's send again does not."""

    job_id: str
    project_id: int | None = None
    build_id: int | None = None

    @property
    def build_key(self) -> tuple[int, int] | None:
        """The job's build as (project id, build id), when the message names it."""
        return None if self.project_id is None or self.build_id is None else (self.project_id, self.build_id)


@dataclass(frozen=True, repr=False)
class RunDeploymentJob(FieldsRepr):
    """Deployments queue: a deployment job for the service's own providers to deliver."""

    job_id: str


@dataclass(frozen=True, repr=False)
class AgentDeadline(FieldsRepr):
    """Deployments queue, delayed: an agent's deployment job whose time to be taken is up."""

    job_id: str


@dataclass(frozen=True, repr=False)
class Announce(FieldsRepr):
    """Notifications queue: a build or a deployment (one of the two ids) reached a final status at ``revision``."""

    project_id: int
    revision: int
    build_id: int | None = None
    deployment_id: int | None = None
    owed_id: str | None = None  # its outbox entry, which its receiver forgets once it is handled
    # a build's project's key (account id, slug), when the build kept it: build and project are read at once
    project_key: tuple[int, str] | None = None


@dataclass(frozen=True, repr=False)
class ReportStatus(FieldsRepr):
    """Notifications queue: post a build's state on its commit at the forge (``attempt``: the tries before)."""

    project_id: int
    build_id: int
    attempt: int = 0
    state: str | None = None  # on a try again, the state that failed: a newer state has a message of its own


@dataclass(frozen=True, repr=False)
class StartScheduledBuild(FieldsRepr):
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
    if isinstance(message, RunJob) and message.project_id is not None and message.build_id is not None:
        return {"jobId": message.job_id, "projectId": message.project_id, "buildId": message.build_id}
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
    if message.owed_id is not None:
        body["owedId"] = message.owed_id
    if message.project_key is not None:
        body["accountId"], body["slug"] = message.project_key
    return body


def job_message(body: Any) -> RunJob:
    """A jobs queue body (keys that are not numbers are left out: the job is read alone)."""
    job_id = _job_id(body)
    project_id, build_id = body.get("projectId"), body.get("buildId")
    if not all(isinstance(key, int) and not isinstance(key, bool) for key in (project_id, build_id)):
        return RunJob(job_id)
    return RunJob(job_id, project_id, build_id)


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
            owed_id=body["owedId"] if isinstance(body.get("owedId"), str) else None,
            project_key=_project_key(body),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise NotAMessage(str(error)) from error


def _project_key(body: dict[str, Any]) -> tuple[int, str] | None:
    """An announcement's project key, when it names one in the form sent (else the project is looked up by id)."""
    account_id, slug = body.get("accountId"), body.get("slug")
    if not isinstance(account_id, int) or isinstance(account_id, bool) or not isinstance(slug, str) or not slug:
        return None
    return account_id, slug


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
