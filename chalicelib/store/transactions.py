"""Multi-item writes that succeed or fail as one, and the uniqueness claims they carry."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from pynamodb.attributes import NumberAttribute
from pynamodb.connection import Connection
from pynamodb.exceptions import DeleteError, PutError, TransactWriteError, UpdateError
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from chalicelib.errors import Conflict
from chalicelib.store.models import UniqueModel

M = TypeVar("M", bound=Model)
CONDITION_FAILED = "ConditionalCheckFailed"  # a transaction item's cancellation code when its condition did not hold


@cache
def _connection() -> Connection:
    """One connection for every transaction: each new one would load botocore's service model again."""
    return Connection()


@contextmanager
def atomically(conflict_message: str) -> Iterator[TransactWrite]:
    """A transaction whose failed conditions become one Conflict carrying ``conflict_message``."""
    try:
        with TransactWrite(connection=_connection()) as transaction:
            yield transaction
    except TransactWriteError as error:
        if error.cause_response_code in ("TransactionCanceledException", "TransactionConflictException"):
            raise Conflict(conflict_message) from error
        raise


def cancellation_codes(conflict: Conflict) -> list[str | None] | None:
    """Why the transaction ``atomically`` turned into ``conflict`` was cancelled, item by item as PynamoDB sent
    them (its condition checks, deletes, puts, then updates, each kind in the order added): a code such as
    ``ConditionalCheckFailed`` or ``TransactionConflict`` (another transaction had the item), None for an item
    that was not the cause; None when DynamoDB gave no reasons."""
    cause = conflict.__cause__
    if not isinstance(cause, TransactWriteError) or not cause.cancellation_reasons:
        return None
    return [None if reason is None else reason.code for reason in cause.cancellation_reasons]


def is_transaction_conflict(error: PutError | UpdateError | DeleteError) -> bool:
    """True when a single-item write failed because a transaction held its item at that moment (worth trying
    again: the transaction ends within milliseconds)."""
    return error.cause_response_code == "TransactionConflictException"


def is_condition_failure(error: PutError | UpdateError | DeleteError) -> bool:
    """True when a single-item write failed only because its condition did not hold."""
    return error.cause_response_code == "ConditionalCheckFailedException"


def condition_held(write: Callable[[], object]) -> bool:
    """Whether a single-item ``write`` under a condition was made: False, nothing written, when its condition did not
    hold (another writer was first, the item is gone or there already); any other failure is raised."""
    try:
        write()
    except (PutError, UpdateError, DeleteError) as error:
        if is_condition_failure(error):
            return False
        raise
    return True


def still_at(revision_attribute: NumberAttribute, revision: int) -> Condition:
    """The item is still at the ``revision`` it was read at (0: an item written before revisions were kept)."""
    return revision_attribute == revision if revision else revision_attribute.does_not_exist()


def claim(transaction: TransactWrite, key: str, expires: datetime | None = None) -> None:
    """Add to ``transaction`` a claim on ``key`` that fails if someone holds it already (until ``expires``, if
    given: DynamoDB's TTL removes it later)."""
    transaction.save(UniqueModel(key, expires=expires), condition=UniqueModel.key.does_not_exist())


def release(transaction: TransactWrite, key: str) -> None:
    """Add to ``transaction`` the release of the claim on ``key``."""
    transaction.delete(UniqueModel(key))


def is_claimed(key: str) -> bool:
    """Whether someone holds the claim on ``key`` (a read for clear messages; writes still claim)."""
    return UniqueModel.count(key, limit=1) > 0


def email_claim(account_id: int, email_key: str) -> str:
    return f"email#{account_id}#{email_key}"


def role_name_claim(account_id: int, name_key: str) -> str:
    return f"role#{account_id}#{name_key}"


def rewrite_unchanged(models: Iterable[M], rewrite: Callable[[M], tuple[list[Any], Condition] | None]) -> int:
    """Apply to each item the update ``rewrite`` gives for it (None: it needs none), under that update's condition
    that the item is as it was read; an item changed or deleted meanwhile is left alone. How many were rewritten.
    For migrations, over a Scan."""
    rewritten = 0
    for model in models:
        change = rewrite(model)
        if change is None:
            continue
        actions, condition = change
        try:
            model.update(actions=actions, condition=condition)
        except UpdateError as error:
            if is_condition_failure(error):
                continue
            raise
        rewritten += 1
    return rewritten
