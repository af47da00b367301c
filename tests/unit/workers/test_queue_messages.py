"""A queue's messages are read from an SQS event in order; a record that is no message is logged and skipped,
so one bad record does not hold back the others."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from chalice.app import SQSEvent

from chalicelib.workers.queue_messages import read_messages

log = logging.getLogger("tests.queue")


def event(*bodies: str) -> SQSEvent:
    return SQSEvent({"Records": [{"body": body, "receiptHandle": f"r{n}"} for n, body in enumerate(bodies)]}, None)


def job_id(body: Any) -> str:
    if not isinstance(body, dict) or "jobId" not in body:
        raise ValueError("not a job")
    return str(body["jobId"])


def test_each_message_is_read_in_order() -> None:
    assert read_messages(event('{"jobId": "a"}', '{"jobId": "b"}'), job_id, log, "no job") == ["a", "b"]


def test_a_record_that_is_no_message_is_logged_and_the_others_read(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="tests.queue"):
        read = read_messages(
            event("not json", '{"other": 1}', '{"jobId": "c"}'), job_id, log, "a queue message is no job"
        )

    assert read == ["c"]
    assert [record.getMessage() for record in caplog.records] == [
        "a queue message is no job: not json",
        'a queue message is no job: {"other": 1}',
    ]
