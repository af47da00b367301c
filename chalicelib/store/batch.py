"""Items of several tables in one BatchGetItem: what a page of deployments shows, in one call instead of one per row.

PynamoDB's ``batch_get`` reads one model's table per call; DynamoDB takes up to 100 keys over any number of
tables in one request. This asks for all of them at once, again for what DynamoDB leaves unprocessed, and hands
back model instances.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, TypeVar

from pynamodb.models import Model

from chalicelib import aws

KEYS_PER_CALL = 100  # DynamoDB's limit for one BatchGetItem
MAX_ROUNDS = 8  # unprocessed keys (throttling) are asked for again, this many times at most

M = TypeVar("M", bound=Model)
Key = tuple[type[Model], Any, Any]  # a model class, its hash key value, its range key value (None without one)


def get_items(keys: Iterable[Key], consistent: bool = True) -> dict[type[Model], list[Model]]:
    """The items the keys name, by model class; missing items are left out."""
    tables: dict[str, type[Model]] = {}
    wanted: list[tuple[str, dict[str, Any]]] = []
    for model, hash_key, range_key in dict.fromkeys(keys):
        table = model.Meta.table_name
        tables[table] = model
        wanted.append((table, _serialized_key(model, hash_key, range_key)))
    found: dict[type[Model], list[Model]] = defaultdict(list)
    for start in range(0, len(wanted), KEYS_PER_CALL):
        request: dict[str, Any] = defaultdict(lambda: {"Keys": [], "ConsistentRead": consistent})
        for table, key in wanted[start : start + KEYS_PER_CALL]:
            request[table]["Keys"].append(key)
        for round_number in range(MAX_ROUNDS):
            if round_number:
                time.sleep(0.05 * 2**round_number)
            reply = aws.client("dynamodb").batch_get_item(RequestItems=dict(request))
            for table, items in reply.get("Responses", {}).items():
                found[tables[table]].extend(tables[table].from_raw_data(item) for item in items)
            request = reply.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            raise RuntimeError("DynamoDB left keys of a batch read unprocessed round after round.")
    return found


def of_model(found: dict[type[Model], list[Model]], model: type[M]) -> list[M]:
    """The items of one model class out of ``get_items``' answer."""
    return found.get(model, [])  # type: ignore[return-value]


def _serialized_key(model: type[Model], hash_key: Any, range_key: Any) -> dict[str, Any]:
    hash_attribute = model._hash_key_attribute()
    key = {hash_attribute.attr_name: {hash_attribute.attr_type: hash_attribute.serialize(hash_key)}}
    range_attribute = model._range_key_attribute()
    if range_attribute is not None:
        key[range_attribute.attr_name] = {range_attribute.attr_type: range_attribute.serialize(range_key)}
    return key
