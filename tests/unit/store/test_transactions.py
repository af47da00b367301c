"""A single-item write under a condition tells whether it was made: a condition that did not hold is an answer
(another writer was first), any other failure is raised."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from pynamodb.exceptions import DeleteError, PutError, UpdateError

from chalicelib.store.transactions import condition_held


def failed(kind: type[PutError | UpdateError | DeleteError], code: str) -> PutError | UpdateError | DeleteError:
    return kind("the write failed", cause=ClientError({"Error": {"Code": code, "Message": "no"}}, "Write"))


def test_a_write_made_is_true() -> None:
    made: list[str] = []

    assert condition_held(lambda: made.append("written")) is True
    assert made == ["written"]


@pytest.mark.parametrize("kind", [PutError, UpdateError, DeleteError])
def test_a_write_whose_condition_did_not_hold_is_false(kind: type[PutError | UpdateError | DeleteError]) -> None:
    def write() -> None:
        raise failed(kind, "ConditionalCheckFailedException")

    assert condition_held(write) is False


def test_any_other_failure_of_the_write_is_raised() -> None:
    def write() -> None:
        raise failed(UpdateError, "ProvisionedThroughputExceededException")

    with pytest.raises(UpdateError):
        condition_held(write)
