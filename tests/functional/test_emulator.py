"""The embedded emulator as the service relies on it: a request this process sends without a socket is refused
unless signed with the stack's key, as one over HTTP is; and its DynamoDB transactions (local/moto_patches.py)
stay all-or-nothing: one that fails in any part leaves every item it named as it was; and items of every attribute
type read back as they were written, through each item operation."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.local import moto_patches
from chalicelib.local.emulator import assumed_role_credentials
from tests.support import unique


@pytest.fixture(scope="module")
def table(aws_endpoint: str) -> Iterator[str]:
    """A table keyed like the service's job table: a partition key and a sort key."""
    name = unique("transactions")
    dynamodb = aws.client("dynamodb")
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    yield name
    dynamodb.delete_table(TableName=name)


def test_a_dynamodb_request_of_this_process_signed_with_another_key_is_refused(table: str, aws_endpoint: str) -> None:
    forged = boto3.client(
        "dynamodb",
        endpoint_url=aws_endpoint,
        region_name="us-east-1",
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],  # the stack's key id, without its secret
        aws_secret_access_key="not-the-stacks-secret",
    )

    with pytest.raises(ClientError) as refused:
        forged.scan(TableName=table)

    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_a_role_the_stack_assumed_signs_its_requests_while_its_credentials_last(table: str, aws_endpoint: str) -> None:
    role_arn = "arn:aws:iam::123456789012:role/deployer"
    assumed = aws.client("sts").assume_role(RoleArn=role_arn, RoleSessionName=unique("session"))["Credentials"]
    as_role = boto3.client(
        "dynamodb",
        endpoint_url=aws_endpoint,
        region_name="us-east-1",
        aws_access_key_id=assumed["AccessKeyId"],
        aws_secret_access_key=assumed["SecretAccessKey"],
        aws_session_token=assumed["SessionToken"],
    )

    known = assumed_role_credentials(assumed["AccessKeyId"])
    as_role.describe_table(TableName=table)  # signed with the role's credentials: taken

    assert known is not None and known.secret_key == assumed["SecretAccessKey"]
    assert assumed_role_credentials("AKIANOBODYASSUMED") is None


def key(sk: str) -> dict[str, Any]:
    return {"pk": {"S": "p"}, "sk": {"S": sk}}


def put(table: str, sk: str, value: str) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {**key(sk), "value": {"S": value}}}}


def update(table: str, sk: str, value: str, condition: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {
        "TableName": table,
        "Key": key(sk),
        "UpdateExpression": "SET #v = :v",
        "ExpressionAttributeNames": {"#v": "value"},
        "ExpressionAttributeValues": {":v": {"S": value}},
    }
    if condition:
        part["ConditionExpression"] = condition
    return {"Update": part}


def items(table: str) -> dict[str, str]:
    found = aws.client("dynamodb").scan(TableName=table, ConsistentRead=True)["Items"]
    return {item["sk"]["S"]: item["value"]["S"] for item in found}


def transact(*parts: dict[str, Any]) -> None:
    aws.client("dynamodb").transact_write_items(TransactItems=list(parts))


@pytest.fixture
def stored(table: str) -> dict[str, str]:
    """The table holding a and b (and only them)."""
    for sk in items(table):
        aws.client("dynamodb").delete_item(TableName=table, Key=key(sk))
    transact(put(table, "a", "1"), put(table, "b", "1"))
    return items(table)


def test_a_transaction_whose_last_condition_fails_writes_none_of_its_parts(table: str, stored: dict[str, str]) -> None:
    with pytest.raises(ClientError) as refused:
        transact(
            update(table, "a", "2"),
            put(table, "c", "new"),
            {"Delete": {"TableName": table, "Key": key("b")}},
            update(table, "d", "3", condition="attribute_exists(pk)"),
        )

    assert refused.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert items(table) == stored == {"a": "1", "b": "1"}


def test_a_transaction_refused_as_invalid_after_a_write_leaves_that_write_undone(
    table: str, stored: dict[str, str]
) -> None:
    moto_patches.install()  # installed again: what a second local stack in the process does changes nothing
    invalid = update(table, "b", "3")
    invalid["Update"]["UpdateExpression"] = "SET #v = :undefined"

    with pytest.raises(ClientError) as refused:
        transact(update(table, "a", "2"), put(table, "c", "new"), invalid)

    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert items(table) == stored


def test_a_transaction_that_holds_writes_every_part(table: str, stored: dict[str, str]) -> None:
    transact(
        update(table, "a", "2", condition="attribute_exists(pk)"),
        put(table, "c", "new"),
        {"Delete": {"TableName": table, "Key": key("b")}},
    )

    assert items(table) == {"a": "2", "c": "new"}


EVERY_TYPE = {
    "text": {"S": 'é\u2028"quoted"'},
    "number": {"N": "-12.5"},
    "yes": {"BOOL": True},
    "nothing": {"NULL": True},
    "texts": {"SS": ["a", "b"]},
    "numbers": {"NS": ["1", "2"]},
    "list": {"L": [{"S": "x"}, {"M": {"deep": {"N": "1"}}}]},
    "map": {"M": {"inner": {"L": []}, "empty": {"S": ""}}},
}


@pytest.mark.parametrize("binary", [False, True], ids=["json-only", "with-binary"])
def test_items_of_every_type_read_back_as_written_through_each_item_operation(
    table: str, stored: dict[str, str], binary: bool
) -> None:
    dynamodb = aws.client("dynamodb")
    written = {**key("typed"), **EVERY_TYPE, **({"bytes": {"B": b"\x00\xff"}} if binary else {})}

    dynamodb.put_item(TableName=table, Item=written)

    assert dynamodb.get_item(TableName=table, Key=key("typed"), ConsistentRead=True)["Item"] == written
    queried = dynamodb.query(
        TableName=table,
        KeyConditionExpression="pk = :p AND sk = :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "typed"}},
    )
    assert (queried["Count"], queried["Items"]) == (1, [written])
    fetched = dynamodb.batch_get_item(RequestItems={table: {"Keys": [key("typed")]}})["Responses"][table]
    assert fetched == [written]
    old = dynamodb.update_item(
        TableName=table,
        Key=key("typed"),
        UpdateExpression="SET #n = :n",
        ExpressionAttributeNames={"#n": "number"},
        ExpressionAttributeValues={":n": {"N": "7"}},
        ReturnValues="ALL_OLD",
    )["Attributes"]
    assert old == written
    assert dynamodb.delete_item(TableName=table, Key=key("typed"), ReturnValues="ALL_OLD")["Attributes"] == {
        **written,
        "number": {"N": "7"},
    }
