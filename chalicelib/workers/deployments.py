"""The deployments queue and its dead-letter queue."""

from __future__ import annotations

import json
import logging

from chalice.app import SQSEvent

from chalicelib.domain import progress

log = logging.getLogger(__name__)


def _messages(event: SQSEvent) -> list[dict[str, object]]:
    messages = []
    for record in event:
        try:
            body = json.loads(record.body)
            str(body["jobId"])
            messages.append(body)
        except (ValueError, KeyError, TypeError):
            log.error("a deployments queue message is not a job: %.200s", record.body)
    return messages


def run_deployments(event: SQSEvent) -> None:
    """A deployment job to deliver, or an agent job whose time to be taken is up."""
    from chalicelib.domain.deployment_jobs import agent_deadline, run_deployment_job  # loads only here: cold start

    for message in _messages(event):
        if message.get("agentDeadline"):
            agent_deadline(str(message["jobId"]))
        else:
            run_deployment_job(str(message["jobId"]))


def abandon_deployments(event: SQSEvent) -> None:
    """A deployment job whose message failed every delivery ends failed."""
    for message in _messages(event):
        progress.abandon_job(
            str(message["jobId"]), "The deployment could not be run: its message failed every delivery."
        )
