"""The SQS pump: what Lambda's event-source mapping does for deployed stages, done for chalice local.

One poller thread per queue long-polls it and hands each batch to a worker, which invokes the app's
registered handler in-process with a real SQS-shaped event. Each queue has ``workers`` workers of its own,
as each Lambda function scales on its own: a busy queue is never starved by idle ones. A batch that succeeds is
deleted; one that raises stays on the queue and comes back after its visibility timeout (and, after
enough tries, lands in the dead-letter queue). A handler may return ``batchItemFailures`` to keep
only some of its records, as with ``ReportBatchItemFailures``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalice import Chalice
from chalice.app import Rate, ScheduledEventConfig, SQSEventConfig
from chalice.local import LambdaContext

from chalicelib import aws

log = logging.getLogger(__name__)
MAX_BATCH = 10  # SQS returns at most ten messages per receive
MAX_RUNTIME_MS = 900_000  # what a handler is given, as Lambda's longest timeout would


class SqsPump:
    """Feeds every SQS handler of ``app`` from its queue until stopped."""

    def __init__(self, app: Chalice, workers: int = 4, wait_seconds: int = 1) -> None:
        self._app = app
        self._workers = workers
        self._wait_seconds = wait_seconds
        self._stopping = threading.Event()
        self._sources = [s for s in app.event_sources if isinstance(s, SQSEventConfig) and s.queue]
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, workers * len(self._sources)), thread_name_prefix="sqs-worker"
        )
        self._pollers: list[threading.Thread] = []

    def start(self) -> None:
        sqs = aws.client("sqs")
        for source in self._sources:
            url = sqs.get_queue_url(QueueName=source.queue)["QueueUrl"]
            slots = threading.BoundedSemaphore(self._workers)
            poller = threading.Thread(
                target=self._poll, args=(source, url, slots), name=f"sqs-poller-{source.queue}", daemon=True
            )
            poller.start()
            self._pollers.append(poller)

        for schedule in self._app.event_sources:
            if isinstance(schedule, ScheduledEventConfig):
                timer = threading.Thread(
                    target=self._tick, args=(schedule,), name=f"schedule-{schedule.name}", daemon=True
                )
                timer.start()
                self._pollers.append(timer)

    def _tick(self, schedule: ScheduledEventConfig) -> None:
        """Invoke a scheduled handler at its rate, as EventBridge would (cron expressions: at the start of every
        minute), and once at the start: a stack that was down catches up at once (a sweep finds the leases that ran
        out meanwhile, the schedules due meanwhile start their builds)."""
        expression = schedule.schedule_expression
        seconds: float | None = None  # a cron expression's: until the next minute starts
        if isinstance(expression, Rate):
            seconds = expression.value * {"MINUTES": 60, "HOURS": 3600, "DAYS": 86400}[expression.unit]
        while not self._stopping.is_set():
            event = {
                "version": "0",
                "id": "local",
                "detail-type": "Scheduled Event",
                "source": "aws.events",
                "account": "123456789012",
                "time": "",
                "region": "us-east-1",
                "resources": [],
                "detail": {},
            }
            try:
                self._app.handler_map[schedule.name](event, LambdaContext(schedule.name, 128, MAX_RUNTIME_MS))
            except Exception:
                log.exception("scheduled handler %s failed", schedule.name)
            self._stopping.wait(seconds if seconds is not None else 60 - time.time() % 60)

    def stop(self) -> None:
        """Stop receiving, and wait for the batches already handed out."""
        self._stopping.set()
        for poller in self._pollers:
            poller.join()
        self._pool.shutdown(wait=True)

    def _poll(self, source: SQSEventConfig, url: str, slots: threading.BoundedSemaphore) -> None:
        """Receive a batch whenever one of this queue's workers is free."""
        sqs = aws.client("sqs")
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        while not self._stopping.is_set():
            if not slots.acquire(timeout=self._wait_seconds):
                continue
            try:
                messages = sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=min(source.batch_size, MAX_BATCH),
                    WaitTimeSeconds=self._wait_seconds,
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
            except Exception:
                log.exception("receiving from %s failed", source.queue)
                messages = []
            if messages:
                self._pool.submit(self._deliver, source, url, arn, messages, slots)
            else:
                slots.release()

    def _deliver(
        self,
        source: SQSEventConfig,
        url: str,
        arn: str,
        messages: list[dict[str, Any]],
        slots: threading.BoundedSemaphore,
    ) -> None:
        try:
            handler = self._app.handler_map[source.name]
            event = sqs_event(arn, messages)
            context = LambdaContext(source.name, memory_size=128, max_runtime_ms=MAX_RUNTIME_MS)
            try:
                result = handler(event, context)
            except Exception:
                log.exception("%s failed; its batch will be delivered again", source.name)
                return
            failed = {item["itemIdentifier"] for item in (result or {}).get("batchItemFailures", [])}
            done = [message for message in messages if message["MessageId"] not in failed]
            if done:
                aws.client("sqs").delete_message_batch(
                    QueueUrl=url,
                    Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
                )
        finally:
            slots.release()


def sqs_event(queue_arn: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The event Lambda hands an SQS handler for these received messages."""
    region = queue_arn.split(":")[3]
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": message.get("MessageAttributes", {}),
                "md5OfBody": message.get("MD5OfBody") or hashlib.md5(message["Body"].encode()).hexdigest(),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for message in messages
        ]
    }
