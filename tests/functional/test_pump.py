"""The SQS pump feeds a Chalice app's SQS handlers from the emulator's queues, as Lambda would."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from chalice import Chalice
from chalice.app import SQSEvent

from chalicelib import aws
from chalicelib.local.pump import SqsPump
from chalicelib.local.resources import ensure_queue
from tests.support import unique

ECHO_QUEUE = unique("pump-echo")
FAILING_QUEUE = unique("pump-failing")
PARTIAL_QUEUE = unique("pump-partial")
CONCURRENT_QUEUE = unique("pump-concurrent")
SCALING_QUEUE = unique("pump-scaling")
CAPPED_QUEUE = unique("pump-capped")
WAIT_SECONDS = 15

app = Chalice("pump-test")


class Deliveries:
    """Every event the handlers were given, by queue, as Lambda's raw event dicts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, list[dict[str, Any]]] = {}

    def record(self, queue: str, event: SQSEvent) -> dict[str, Any]:
        raw = event.to_dict()
        with self._lock:
            self._events.setdefault(queue, []).append(raw)
        return raw

    def events(self, queue: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._events.get(queue, []))

    def records(self, queue: str) -> list[dict[str, Any]]:
        return [record for event in self.events(queue) for record in event["Records"]]

    def bodies(self, queue: str) -> list[str]:
        return [record["body"] for record in self.records(queue)]


class Concurrency:
    """How many handlers are running now, and the most that ever ran at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = 0
        self.most = 0

    @contextmanager
    def one_more(self) -> Iterator[None]:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1


class HeldHandlers:
    """Handlers that stay running until released, and how many ran at once."""

    def __init__(self) -> None:
        self.concurrency = Concurrency()
        self.released = threading.Event()

    def handle(self, queue: str, event: SQSEvent) -> None:
        deliveries.record(queue, event)
        with self.concurrency.one_more():
            self.released.wait(WAIT_SECONDS * 2)  # bounded: a failed test's handlers still end

    @contextmanager
    def held(self) -> Iterator[HeldHandlers]:
        """Hold every handler until the block ends."""
        self.released.clear()
        try:
            yield self
        finally:
            self.released.set()


deliveries = Deliveries()
concurrency = Concurrency()
scaling = HeldHandlers()
capped = HeldHandlers()
barrier = threading.Barrier(4, timeout=10)
passed_barrier: list[str] = []


@app.on_sqs_message(queue=ECHO_QUEUE, batch_size=1)
def echo(event: SQSEvent) -> None:
    deliveries.record(ECHO_QUEUE, event)


@app.on_sqs_message(queue=FAILING_QUEUE, batch_size=1)
def fails_the_first_time(event: SQSEvent) -> None:
    deliveries.record(FAILING_QUEUE, event)
    if len(deliveries.events(FAILING_QUEUE)) == 1:
        raise RuntimeError("the first delivery fails")


@app.on_sqs_message(queue=PARTIAL_QUEUE, batch_size=10)
def keeps_retry_me_once(event: SQSEvent) -> dict[str, Any]:
    raw = deliveries.record(PARTIAL_QUEUE, event)
    first_time = deliveries.bodies(PARTIAL_QUEUE).count("retry-me") == 1
    failed = [record["messageId"] for record in raw["Records"] if record["body"] == "retry-me" and first_time]
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}


@app.on_sqs_message(queue=CONCURRENT_QUEUE, batch_size=1)
def waits_for_three_others(event: SQSEvent) -> None:
    deliveries.record(CONCURRENT_QUEUE, event)
    with concurrency.one_more():
        barrier.wait()  # raises BrokenBarrierError unless four handlers run at once
    passed_barrier.extend(record.body for record in event)


@app.on_sqs_message(queue=SCALING_QUEUE, batch_size=1)
def held_while_scaling(event: SQSEvent) -> None:
    scaling.handle(SCALING_QUEUE, event)


@app.on_sqs_message(queue=CAPPED_QUEUE, batch_size=1)
def held_at_the_maximum(event: SQSEvent) -> None:
    capped.handle(CAPPED_QUEUE, event)


@pytest.fixture(scope="module")
def queue_urls(aws_endpoint: str, fresh_resources: None) -> dict[str, str]:
    """Every queue of the test app, made as the local stack makes them."""
    queues = (ECHO_QUEUE, FAILING_QUEUE, PARTIAL_QUEUE, CONCURRENT_QUEUE, SCALING_QUEUE, CAPPED_QUEUE)
    return {name: ensure_queue(name) for name in queues}


@contextmanager
def running_pump(max_concurrency: int = 4) -> Iterator[SqsPump]:
    pump = SqsPump(app, max_concurrency=max_concurrency, wait_seconds=1)
    pump.start()
    try:
        yield pump
    finally:
        pump.stop()


def wait_until(condition: Callable[[], bool], what: str, seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {seconds} s waiting for {what}")
        time.sleep(0.05)


def messages_on(url: str) -> int:
    """Messages still on the queue, visible or in flight."""
    attributes = aws.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


def waiting_on(url: str) -> int:
    """Messages on the queue that nobody has received."""
    attributes = aws.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def workers_of(queue: str) -> int:
    """The pump's worker threads handling a batch of ``queue`` now."""
    return sum(thread.name == f"sqs-worker-{queue}" for thread in threading.enumerate())


def send(url: str, *bodies: str) -> list[str]:
    sqs = aws.client("sqs")
    return [sqs.send_message(QueueUrl=url, MessageBody=body)["MessageId"] for body in bodies]


def redeliver_after_one_second(url: str) -> None:
    aws.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "1"})


def test_sent_message_reaches_its_handler_as_an_sqs_event_and_is_deleted(queue_urls: dict[str, str]) -> None:
    url = queue_urls[ECHO_QUEUE]
    body = unique("hello")
    arn = aws.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    (message_id,) = send(url, body)

    with running_pump():
        wait_until(lambda: body in deliveries.bodies(ECHO_QUEUE), "the handler to get the message")
        wait_until(lambda: messages_on(url) == 0, "the handled message to be deleted")

    (record,) = [record for record in deliveries.records(ECHO_QUEUE) if record["body"] == body]
    assert record["messageId"] == message_id
    assert record["receiptHandle"]
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"] == arn


def test_each_message_reaches_the_handler_with_its_own_message_id(queue_urls: dict[str, str]) -> None:
    url = queue_urls[ECHO_QUEUE]
    bodies = [unique("one-of-three") for _ in range(3)]
    sent_ids = send(url, *bodies)

    with running_pump():
        wait_until(lambda: set(bodies) <= set(deliveries.bodies(ECHO_QUEUE)), "all three messages")
        wait_until(lambda: messages_on(url) == 0, "the handled messages to be deleted")

    received = {record["body"]: record["messageId"] for record in deliveries.records(ECHO_QUEUE)}
    received_ids = [received[body] for body in bodies]
    assert len(set(received_ids)) == 3
    assert received_ids == sent_ids


def test_message_whose_handler_raised_is_delivered_again(queue_urls: dict[str, str]) -> None:
    url = queue_urls[FAILING_QUEUE]
    redeliver_after_one_second(url)
    (message_id,) = send(url, "try again")

    with running_pump():
        wait_until(lambda: len(deliveries.events(FAILING_QUEUE)) >= 2, "a second delivery")
        wait_until(lambda: messages_on(url) == 0, "the message to be deleted after it succeeded")

    assert [(record["messageId"], record["body"]) for record in deliveries.records(FAILING_QUEUE)] == [
        (message_id, "try again"),
        (message_id, "try again"),
    ]


def test_only_the_records_a_handler_reports_as_failed_are_delivered_again(queue_urls: dict[str, str]) -> None:
    url = queue_urls[PARTIAL_QUEUE]
    redeliver_after_one_second(url)
    aws.client("sqs").send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "keep", "MessageBody": "keep-me"},
            {"Id": "retry", "MessageBody": "retry-me"},
        ],
    )

    with running_pump():  # started after sending, so the first receive holds both messages
        wait_until(lambda: deliveries.bodies(PARTIAL_QUEUE).count("retry-me") >= 2, "retry-me to come back")
        wait_until(lambda: messages_on(url) == 0, "both messages to be deleted")

    first_batch = deliveries.events(PARTIAL_QUEUE)[0]
    assert sorted(record["body"] for record in first_batch["Records"]) == ["keep-me", "retry-me"]
    assert sorted(deliveries.bodies(PARTIAL_QUEUE)) == ["keep-me", "retry-me", "retry-me"]


def test_four_messages_waiting_are_handled_at_the_same_time(queue_urls: dict[str, str]) -> None:
    url = queue_urls[CONCURRENT_QUEUE]
    bodies = [f"concurrent-{number}" for number in range(4)]
    send(url, *bodies)

    with running_pump():
        wait_until(lambda: len(passed_barrier) == 4 or barrier.broken, "four handlers to meet at the barrier")
        assert not barrier.broken, f"at most {concurrency.most} handlers ran at the same time"
        wait_until(lambda: messages_on(url) == 0, "the four messages to be deleted")

    assert sorted(passed_barrier) == bodies


def test_a_queues_workers_grow_with_the_messages_waiting_and_end_once_they_are_handled(
    queue_urls: dict[str, str],
) -> None:
    url = queue_urls[SCALING_QUEUE]
    bodies = [f"scaling-{number}" for number in range(12)]
    send(url, *bodies)

    with running_pump(max_concurrency=20):
        with scaling.held():
            wait_until(lambda: scaling.concurrency.running == 12, "twelve handlers to run at once")
            assert workers_of(SCALING_QUEUE) == 12
        wait_until(lambda: messages_on(url) == 0, "the twelve messages to be deleted")
        wait_until(lambda: workers_of(SCALING_QUEUE) == 0, "the queue's workers to end")

    assert scaling.concurrency.most == 12
    assert sorted(deliveries.bodies(SCALING_QUEUE)) == sorted(bodies)


def test_a_queue_runs_no_more_handlers_at_once_than_its_maximum_and_leaves_the_rest_waiting(
    queue_urls: dict[str, str],
) -> None:
    url = queue_urls[CAPPED_QUEUE]
    bodies = [f"capped-{number}" for number in range(8)]
    send(url, *bodies)

    with running_pump(max_concurrency=3):
        with capped.held():
            wait_until(lambda: capped.concurrency.running == 3, "three handlers to run at once")
            wait_until(lambda: waiting_on(url) == 5, "five messages left for later")
            echo_body = unique("not held up")
            send(queue_urls[ECHO_QUEUE], echo_body)
            wait_until(lambda: echo_body in deliveries.bodies(ECHO_QUEUE), "another queue's message to be handled")
            assert capped.concurrency.running == 3
        wait_until(lambda: messages_on(url) == 0, "the eight messages to be deleted")

    assert capped.concurrency.most == 3
    assert sorted(deliveries.bodies(CAPPED_QUEUE)) == sorted(bodies)
