"""The SQS pump: what Lambda's event-source mapping does for deployed stages, done for chalice local.

One poller thread per queue long-polls it and hands each batch to a worker thread of its own, which invokes the
app's registered handler in-process with a real SQS-shaped event. As Lambda scales an SQS-fed function with the
queue's backlog, each queue's workers grow with the messages waiting, up to its maximum concurrency (the
handler's ``maximum_concurrency`` if lower), and end with their batch: an idle queue has its poller only. Each
queue has a maximum of its own, as each Lambda function scales on its own: a busy queue never starves another.
A batch that succeeds is deleted; one that raises stays on the queue and comes back after its visibility timeout
(and, after enough tries, lands in the dead-letter queue). A handler may return ``batchItemFailures`` to keep
only some of its records, as with ``ReportBatchItemFailures``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any

from chalice import Chalice
from chalice.app import Rate, ScheduledEventConfig, SQSEventConfig
from chalice.local import LambdaContext

from chalicelib import aws

log = logging.getLogger(__name__)
MAX_BATCH = 10  # SQS returns at most ten messages per receive
MAX_RUNTIME_MS = 900_000  # what a handler is given, as Lambda's longest timeout would
# Batches of one queue handled at once, at most. Each build job's batch holds a sandboxed runner process (some
# 30 MB) until the job ends, so this bounds a burst's memory on a laptop; a 50-build burst still runs at once.
DEFAULT_MAX_CONCURRENCY = 64


class _Capacity:
    """A queue's batches in hand and the most it may hold: what its poller may still receive."""

    def __init__(self, maximum: int) -> None:
        self._maximum = maximum
        self._busy = 0
        self._changed = threading.Condition()

    def reserve(self, wanted: int, timeout: float) -> int:
        """Up to ``wanted`` places, waiting at most ``timeout`` seconds for the first; 0 if none came free."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._busy < self._maximum, timeout):
                return 0
            taken = min(wanted, self._maximum - self._busy)
            self._busy += taken
            return taken

    def release(self, count: int = 1) -> None:
        """Give back places: a batch done, or places reserved for messages the queue did not have."""
        with self._changed:
            self._busy -= count
            self._changed.notify_all()


class SqsPump:
    """Feeds every SQS handler of ``app`` from its queue until stopped; ``max_concurrency``: the batches each queue
    has handled at once, at most."""

    def __init__(self, app: Chalice, max_concurrency: int = DEFAULT_MAX_CONCURRENCY, wait_seconds: int = 1) -> None:
        self._app = app
        self._max_concurrency = max(1, max_concurrency)
        self._wait_seconds = wait_seconds
        self._stopping = threading.Event()
        self._sources = [s for s in app.event_sources if isinstance(s, SQSEventConfig) and s.queue]
        self._pollers: list[threading.Thread] = []
        self._workers: set[threading.Thread] = set()
        self._workers_lock = threading.Lock()

    def start(self) -> None:
        sqs = aws.client("sqs")
        for source in self._sources:
            url = sqs.get_queue_url(QueueName=source.queue)["QueueUrl"]
            capacity = _Capacity(min(self._max_concurrency, source.maximum_concurrency or self._max_concurrency))
            poller = threading.Thread(
                target=self._poll, args=(source, url, capacity), name=f"sqs-poller-{source.queue}", daemon=True
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
        with self._workers_lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join()

    def _poll(self, source: SQSEventConfig, url: str, capacity: _Capacity) -> None:
        """Receive as many batches as the queue has waiting and this queue's workers may take, and start a worker
        for each: the queue's concurrency follows its backlog, up to its maximum."""
        sqs = aws.client("sqs")
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        batch_size = max(1, min(source.batch_size, MAX_BATCH))
        while not self._stopping.is_set():
            places = capacity.reserve(MAX_BATCH // batch_size, timeout=self._wait_seconds)
            if not places:
                continue
            try:
                messages = sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=places * batch_size,
                    WaitTimeSeconds=self._wait_seconds,
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
            except Exception:
                log.exception("receiving from %s failed", source.queue)
                messages = []
            batches = [messages[start : start + batch_size] for start in range(0, len(messages), batch_size)]
            capacity.release(places - len(batches))
            for batch in batches:
                self._start_worker(source, url, arn, batch, capacity)

    def _start_worker(
        self, source: SQSEventConfig, url: str, arn: str, messages: list[dict[str, Any]], capacity: _Capacity
    ) -> None:
        worker = threading.Thread(
            target=self._deliver,
            args=(source, url, arn, messages, capacity),
            name=f"sqs-worker-{source.queue}",
        )
        with self._workers_lock:
            self._workers.add(worker)
        try:
            worker.start()
        except RuntimeError:  # no thread to be had: the batch comes back after its visibility timeout
            log.exception("a worker for %s could not start", source.queue)
            with self._workers_lock:
                self._workers.discard(worker)
            capacity.release()

    def _deliver(
        self, source: SQSEventConfig, url: str, arn: str, messages: list[dict[str, Any]], capacity: _Capacity
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
            capacity.release()
            with self._workers_lock:
                self._workers.discard(threading.current_thread())


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
