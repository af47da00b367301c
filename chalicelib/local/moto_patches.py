"""Where moto's emulation costs more than the answers need: the same answers, for less (``install``).

- **Transactions.** moto keeps a transaction all-or-nothing by deep-copying every table it names before the first
  write and putting the copies back if any part fails: each ``TransactWriteItems`` costs time in proportion to
  everything stored, so a local stack (or a test run) slows down as it fills. Here moto keeps the tables as they
  are and a copy of each item the transaction names is put back in place if it fails. The emulator serves
  DynamoDB requests one at a time (emulator.py), so nothing else writes between the copy and the put-back.
- **Item responses.** moto writes every response by walking botocore's model of it, value by value; the items of
  GetItem, Query and the other item operations are DynamoDB JSON already, so they are written with ``json.dumps``
  (the output's own members only). An item holding binary or a date is still written by moto's serializer.
- **Its module list.** moto lists its own package folder, a stat per entry, for every request it dispatches.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import moto.dynamodb.models as dynamodb_models
from moto import backends
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoResult

_Saved = dict[tuple[str, DynamoType, DynamoType | None], Item | None]


class _TablesKept:
    """What moto.dynamodb.models sees as ``copy``: while ``_kept`` is on, a table "copy" is the table itself."""

    def __init__(self) -> None:
        self.keep_tables = False

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        if self.keep_tables and isinstance(value, Table):
            return value
        return copy.deepcopy(value, memo)


_copy = _TablesKept()
_moto_transact_write_items = DynamoDBBackend.transact_write_items
_moto_execute_result = DynamoResult.execute_result
_ITEM_OPERATIONS = frozenset(
    {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"}
    | {"BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems"}
)


def install() -> None:
    """Patch this process's moto (once is enough; again changes nothing)."""
    dynamodb_models.copy = _copy  # type: ignore[assignment]
    DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]
    DynamoResult.execute_result = _execute_result  # type: ignore[method-assign,assignment]
    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: iter(modules)


def _execute_result(self: DynamoResult, context: Any) -> Any:
    """(status, headers, body) of an answer; an item operation's written as the JSON it already is."""
    result = self.result
    if str(context.operation_model.name) in _ITEM_OPERATIONS and isinstance(result, dict):
        members = context.operation_model.output_shape.members
        try:
            body = json.dumps({key: value for key, value in result.items() if key in members and value is not None})
        except TypeError:  # bytes (binary attributes) or dates: moto's serializer knows how to write them
            pass
        else:
            return 200, {"Content-Type": "application/x-amz-json-1.0"}, body
    return _moto_execute_result(self, context)


def _transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    saved = _items_named(self, transact_items)
    try:
        with _kept():
            _moto_transact_write_items(self, transact_items)
    except BaseException:
        for (table_name, hash_key, range_key), item in saved.items():
            _put_back(self.tables[table_name], hash_key, range_key, item)
        raise


@contextmanager
def _kept() -> Iterator[None]:
    _copy.keep_tables = True
    try:
        yield
    finally:
        _copy.keep_tables = False


def _items_named(backend: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> _Saved:
    """A copy of each item the transaction names, as it is now (None where there is none yet).

    A part whose table or key is missing is not copied: moto refuses that part before writing it.
    """
    saved: _Saved = {}
    for part in transact_items:
        for op_type, op in part.items():
            table = backend.tables.get(op.get("TableName", ""))
            key = op.get("Item", {}) if op_type == "Put" else op.get("Key", {})
            if table is None or table.hash_key_attr not in key:
                continue
            if table.range_key_attr is not None and table.range_key_attr not in key:
                continue
            hash_key = DynamoType(key[table.hash_key_attr])
            range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr is not None else None
            if (table.name, hash_key, range_key) not in saved:
                saved[(table.name, hash_key, range_key)] = copy.deepcopy(table.get_item(hash_key, range_key))
    return saved


def _put_back(table: Table, hash_key: DynamoType, range_key: DynamoType | None, item: Item | None) -> None:
    if item is None:
        table.delete_item(hash_key, range_key)
    elif range_key is not None:
        table.items[hash_key][range_key] = item
    else:  # moto types ``items`` for tables with a sort key only
        table.items[hash_key] = item  # type: ignore[assignment]
