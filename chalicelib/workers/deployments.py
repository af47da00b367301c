"""The deployments queue and its dead-letter queue."""

from __future__ import annotations

import logging

from chalice.app import SQSEvent

from chalicelib.core.messages import AgentDeadline, RunDeploymentJob, deployment_message
from chalicelib.domain.execution import lost_jobs
from chalicelib.workers.queue_messages import read_messages

log = logging.getLogger(__name__)


def _messages(event: SQSEvent) -> list[RunDeploymentJob | AgentDeadline]:
    return read_messages(event, deployment_message, log, "a deployments queue message is not a job")


def run_deployments(event: SQSEvent) -> None:
    """A deployment job to deliver, or an agent job whose time to be taken is up."""
    from chalicelib.domain.deployments.deployment_jobs import (  # loads only here: cold start
        agent_deadline,
        run_deployment_job,
    )

    for message in _messages(event):
        if isinstance(message, AgentDeadline):
            agent_deadline(message.job_id)
        else:
            run_deployment_job(message.job_id)


def abandon_deployments(event: SQSEvent) -> None:
    """A deployment job whose message failed every delivery ends failed."""
    for message in _messages(event):
        lost_jobs.abandon_job(message.job_id, "The deployment could not be run: its message failed every delivery.")
