"""The work queues: typed messages (core/messages.py), carrying ids only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.core.messages import AgentDeadline, Message, RunDeploymentJob, RunJob, body_of

MAX_DELAY_SECONDS = 900  # SQS's longest message delay


@cache
def _queue_url(name: str) -> str:
    url: str = aws.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]
    return url


class SendFailed(Exception):
    """SQS did not take some of the messages."""


def _send(queue: str, bodies: list[dict[str, Any]], delay_seconds: int = 0) -> None:
    try:
        _send_batches(queue, bodies, delay_seconds)
    except (BotoCoreError, ClientError) as error:
        raise SendFailed(f"{len(bodies)} messages were not queued: {type(error).__name__}") from error


def _send_batches(queue: str, bodies: list[dict[str, Any]], delay_seconds: int) -> None:
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
            raise SendFailed(f"{len(failed)} messages were not queued: {failed[0].get('Message')}")


def _queue_of(message: Message) -> str:
    names = settings()
    if isinstance(message, RunJob):
        return names.jobs_queue
    if isinstance(message, RunDeploymentJob | AgentDeadline):
        return names.deployments_queue
    return names.notifications_queue


def send(messages: Sequence[Message], delay_seconds: int = 0) -> None:
    """Send each message to its queue (ten per call), after ``delay_seconds`` (at most SQS's 900)."""
    by_queue: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        by_queue.setdefault(_queue_of(message), []).append(body_of(message))
    for queue, bodies in by_queue.items():
        _send(queue, bodies, min(delay_seconds, MAX_DELAY_SECONDS))
