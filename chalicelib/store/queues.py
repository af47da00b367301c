"""The jobs queue: one message per job to run, carrying its id only."""

from __future__ import annotations

import json
from functools import cache

from chalicelib import aws
from chalicelib.config import settings


@cache
def _queue_url(name: str) -> str:
    url: str = aws.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]
    return url


def send_jobs(job_ids: list[str]) -> None:
    """Queue the jobs for runners, ten per call (SQS's batch limit)."""
    url = _queue_url(settings().jobs_queue)
    sqs = aws.client("sqs")
    for start in range(0, len(job_ids), 10):
        batch = job_ids[start : start + 10]
        entries = [{"Id": str(i), "MessageBody": json.dumps({"jobId": job_id})} for i, job_id in enumerate(batch)]
        failed = sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", [])
        if failed:
            raise RuntimeError(f"{len(failed)} job messages were not queued: {failed[0].get('Message')}")
