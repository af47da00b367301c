"""The Lambda executor hands the runner function the ticket and nothing else, without waiting for the job. The
Lambda client is botocore's own, stubbed (its calls checked against Lambda's API model); nothing is sent."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber

from chalicelib import aws
from chalicelib.executors.aws_lambda import start
from chalicelib.protocol.ticket import Ticket


@pytest.fixture
def lambda_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    client = boto3.client("lambda", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    monkeypatch.setitem(aws._clients, "lambda", client)  # aws.inject's, put back as it was after the test
    with Stubber(client) as stubber:
        yield stubber


def test_the_runner_function_is_invoked_with_the_ticket_as_an_event(lambda_calls: Stubber) -> None:
    ticket = Ticket("https://ci.example.com", "job-1", "t0ken")
    lambda_calls.add_response(
        "invoke",
        {"StatusCode": 202},
        {"FunctionName": "conveyor-prod-runner", "InvocationType": "Event", "Payload": ticket.to_json().encode()},
    )

    start(ticket, "conveyor-prod-runner")

    lambda_calls.assert_no_pending_responses()  # invoked once, with exactly these parameters (else Stubber raised)
