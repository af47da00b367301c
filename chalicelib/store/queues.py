"""The work queues: one message per job to run, carrying ids only."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from chalicelib import aws
from chalicelib.config import settings

MAX_DELAY_SECONDS = 900  # SQS's longest message delay


@cache
def _queue_url(name: str) -> str:
    url: str = aws.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]
    return url


def _send(queue: str, bodies: list[dict[str, Any]], delay_seconds: int = 0) -> None:
    """Send the messages ten per call (SQS's batch limit)."""
    url = _queue_url(queue)
    sqs = aws.client("sqs")
    for start in range(0, len(bodies), 10):
        entries = [
            {"Id": str(i), "MessageBody": json.dumps(body), "DelaySeconds": delay_seconds}
            for i, body in enumerate(bodies[start : start + 10])
        ]
        failed = sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", [])
        if failed:
            raise RuntimeError(f"{len(failed)} messages were not queued: {failed[0].get('Message')}")


def send_jobs(job_ids: list[str]) -> None:
    """Queue build jobs for runners."""
    _send(settings().jobs_queue, [{"jobId": job_id} for job_id in job_ids])


def send_deployment_jobs(job_ids: list[str]) -> None:
    """Queue deployment jobs for runners."""
    _send(settings().deployments_queue, [{"jobId": job_id} for job_id in job_ids])


def send_notification(body: dict[str, Any]) -> None:
    """Queue the notifications of a finished build or deployment (ids only)."""
    _send(settings().notifications_queue, [body])


def send_agent_deadlines(job_ids: list[str], seconds: int) -> None:
    """Agents take their jobs themselves; these messages come back when their time to do so is up."""
    delay = min(seconds, MAX_DELAY_SECONDS)
    _send(settings().deployments_queue, [{"jobId": job_id, "agentDeadline": True} for job_id in job_ids], delay)
