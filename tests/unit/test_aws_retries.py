"""A DynamoDB write that meets a transaction on its item is sent again (chalicelib/aws.py): botocore does not retry
TransactionConflictException, and builds' and jobs' moves are transactions now. Against a stand-in DynamoDB on
loopback that refuses the first tries the way DynamoDB does."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chalicelib import aws

CONFLICT = {"__type": "com.amazonaws.dynamodb.v20120810#TransactionConflictException", "message": "in a transaction"}
CONDITION = {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", "message": "no"}


class StandIn:
    """Answers each request with the next of ``answers`` (then 200 {}), and counts the requests."""

    def __init__(self) -> None:
        self.answers: list[dict[str, str]] = []
        self.requests = 0


@pytest.fixture
def dynamodb() -> Iterator[tuple[StandIn, str]]:
    stand_in = StandIn()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            stand_in.requests += 1
            answer = stand_in.answers.pop(0) if stand_in.answers else None
            body = json.dumps(answer or {}).encode()
            self.send_response(400 if answer else 200)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield stand_in, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def update(url: str) -> None:
    client = aws.botocore_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=url, aws_access_key_id="x", aws_secret_access_key="x"
    )
    client.update_item(
        TableName="t",
        Key={"id": {"S": "a"}},
        UpdateExpression="SET n = :n",
        ExpressionAttributeValues={":n": {"N": "1"}},
    )


def test_a_write_refused_for_a_transaction_on_its_item_is_sent_again_until_it_goes_through(
    dynamodb: tuple[StandIn, str],
) -> None:
    stand_in, url = dynamodb
    stand_in.answers = [CONFLICT, CONFLICT]

    update(url)

    assert stand_in.requests == 3


def test_a_write_that_keeps_meeting_transactions_fails_after_a_few_tries(dynamodb: tuple[StandIn, str]) -> None:
    stand_in, url = dynamodb
    stand_in.answers = [CONFLICT] * 10

    with pytest.raises(Exception, match="TransactionConflictException"):
        update(url)

    assert stand_in.requests == 6


def test_a_condition_that_does_not_hold_is_not_sent_again(dynamodb: tuple[StandIn, str]) -> None:
    stand_in, url = dynamodb
    stand_in.answers = [CONDITION]

    with pytest.raises(Exception, match="ConditionalCheckFailedException"):
        update(url)

    assert stand_in.requests == 1
