"""ensure_resources / ensure_queue: everything the service needs appears, and running them again is harmless."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from chalice import Chalice

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.domain.team.accounts import create_account
from chalicelib.local.resources import MAX_RECEIVES, ensure_queue, ensure_resources, queue_names
from chalicelib.store.accounts import get_account_by_name
from chalicelib.store.models import ProjectModel
from chalicelib.store.schema import ALL_MODELS
from tests.emulator import emulator_admin_headers
from tests.support import unique

BUILDS_QUEUE = unique("resources-builds")
JOBS_QUEUE = unique("resources-jobs")

queue_app = Chalice("resources-test")


@queue_app.on_sqs_message(queue=BUILDS_QUEUE)
def on_build(event: Any) -> None:
    """Only its queue matters here."""


@queue_app.on_sqs_message(queue=JOBS_QUEUE, batch_size=5)
def on_job(event: Any) -> None:
    """Only its queue matters here."""


@pytest.fixture
def empty_endpoint(aws_endpoint: str) -> str:
    """The emulator with nothing in it: no table, queue, bucket or key."""
    requests.post(f"{aws_endpoint}/moto-api/reset", headers=emulator_admin_headers(), timeout=30).raise_for_status()
    return aws_endpoint


def table_names() -> set[str]:
    dynamodb = aws.client("dynamodb")
    return {name for page in dynamodb.get_paginator("list_tables").paginate() for name in page["TableNames"]}


def all_queue_urls() -> list[str]:
    return aws.client("sqs").list_queues().get("QueueUrls", [])


def queue_attributes(name: str) -> dict[str, str]:
    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


def kms_aliases() -> list[str]:
    kms = aws.client("kms")
    return [entry["AliasName"] for page in kms.get_paginator("list_aliases").paginate() for entry in page["Aliases"]]


def test_queue_names_are_those_of_the_apps_sqs_handlers() -> None:
    assert sorted(queue_names(queue_app)) == sorted([BUILDS_QUEUE, JOBS_QUEUE])


def test_ensure_resources_creates_a_table_for_every_model(empty_endpoint: str) -> None:
    ensure_resources(queue_app)

    expected = {model.Meta.table_name for model in ALL_MODELS}
    assert len(expected) == len(ALL_MODELS)
    assert expected <= table_names()
    assert all(name.startswith(settings().table_prefix) for name in expected)


def test_ensure_resources_creates_the_data_bucket_and_the_secrets_key(empty_endpoint: str) -> None:
    ensure_resources(queue_app)

    aws.client("s3").head_bucket(Bucket=settings().bucket)  # raises ClientError if missing
    assert settings().kms_key in kms_aliases()


def test_every_queue_gets_a_dead_letter_queue_named_in_its_redrive_policy(empty_endpoint: str) -> None:
    ensure_resources(queue_app)

    for name in (BUILDS_QUEUE, JOBS_QUEUE):
        dead_letter_arn = queue_attributes(f"{name}-dlq")["QueueArn"]
        policy = json.loads(queue_attributes(name)["RedrivePolicy"])
        assert policy["deadLetterTargetArn"] == dead_letter_arn
        assert dead_letter_arn.endswith(f":{name}-dlq")
        assert int(policy["maxReceiveCount"]) == MAX_RECEIVES


def test_dead_letter_queues_have_no_dead_letter_queue_of_their_own(empty_endpoint: str) -> None:
    ensure_resources(queue_app)

    assert "RedrivePolicy" not in queue_attributes(f"{BUILDS_QUEUE}-dlq")
    assert not any(url.endswith("-dlq-dlq") for url in all_queue_urls())


def test_running_ensure_resources_twice_changes_nothing(empty_endpoint: str) -> None:
    ensure_resources(queue_app)
    tables, queues, aliases = table_names(), sorted(all_queue_urls()), kms_aliases()
    policy = queue_attributes(JOBS_QUEUE)["RedrivePolicy"]

    ensure_resources(queue_app)

    assert table_names() == tables
    assert sorted(all_queue_urls()) == queues
    assert kms_aliases() == aliases
    assert aliases.count(settings().kms_key) == 1
    assert queue_attributes(JOBS_QUEUE)["RedrivePolicy"] == policy


def test_running_ensure_resources_again_keeps_the_data(empty_endpoint: str) -> None:
    ensure_resources(queue_app)
    name = unique("kept")
    create_account(name, f"owner@{name}.example")
    aws.client("s3").put_object(Bucket=settings().bucket, Key=f"kept/{name}", Body=b"still here")

    ensure_resources(queue_app)

    assert get_account_by_name(name) is not None
    assert aws.client("s3").get_object(Bucket=settings().bucket, Key=f"kept/{name}")["Body"].read() == b"still here"


def test_ensure_queue_twice_returns_the_same_url_and_one_dead_letter_queue(empty_endpoint: str) -> None:
    name = unique("twice")

    first = ensure_queue(name)
    second = ensure_queue(name)

    assert first == second
    assert sorted(url.rsplit("/", 1)[-1] for url in all_queue_urls()) == [name, f"{name}-dlq"]
    dead_letter_arn = queue_attributes(f"{name}-dlq")["QueueArn"]
    assert json.loads(queue_attributes(name)["RedrivePolicy"])["deadLetterTargetArn"] == dead_letter_arn


def test_ensure_queue_keeps_messages_already_on_the_queue(empty_endpoint: str) -> None:
    name = unique("busy")
    url = ensure_queue(name)
    aws.client("sqs").send_message(QueueUrl=url, MessageBody="waiting")

    ensure_queue(name)

    received = aws.client("sqs").receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    assert [message["Body"] for message in received] == ["waiting"]


def test_an_index_added_since_a_table_was_made_is_added_to_the_table(empty_endpoint: str) -> None:
    ensure_resources(queue_app)
    dynamodb = aws.client("dynamodb")
    projects = ProjectModel.Meta.table_name
    dynamodb.update_table(TableName=projects, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-schedule"}}])
    before = dynamodb.describe_table(TableName=projects)["Table"]["GlobalSecondaryIndexes"]
    assert "by-schedule" not in {index["IndexName"] for index in before}  # as a table made before schedules

    ensure_resources(queue_app)

    indexes = dynamodb.describe_table(TableName=projects)["Table"]["GlobalSecondaryIndexes"]
    assert sorted(index["IndexName"] for index in indexes) == sorted(ProjectModel._indexes)
    assert list(ProjectModel.by_schedule.query("scheduled")) == []  # the scheduler's Query works again
