"""API keys, found by the SHA-256 of the key; the key itself is never stored."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from pynamodb.exceptions import PutError
from pynamodb.transactions import TransactWrite

from chalicelib.core.api_keys import ApiKey
from chalicelib.errors import Conflict
from chalicelib.store.models import ApiKeyModel
from chalicelib.store.transactions import is_condition_failure


def key_hash(key: str) -> str:
    """The stored form of a key: keys are long random strings, so a plain SHA-256 is enough."""
    return hashlib.sha256(key.encode()).hexdigest()


def get_api_key(key: str) -> ApiKey | None:
    """What the key acts for, or None when it is unknown."""
    try:
        model = ApiKeyModel.get(key_hash(key))
    except ApiKeyModel.DoesNotExist:
        return None
    account_id = None if model.account_id is None else int(model.account_id)
    return ApiKey(user_id=int(model.user_id), account_id=account_id, account_name=model.account_name)


def _model(key: str, api_key: ApiKey) -> ApiKeyModel:
    return ApiKeyModel(
        key_hash(key),
        user_id=api_key.user_id,
        account_id=api_key.account_id,
        account_name=api_key.account_name,
        created=datetime.now(UTC),
    )


def stage_new_api_key(transaction: TransactWrite, key: str, api_key: ApiKey) -> None:
    """Add to ``transaction`` the storing of a key that must not exist yet."""
    transaction.save(_model(key, api_key), condition=ApiKeyModel.key_hash.does_not_exist())


def add_api_key(key: str, api_key: ApiKey) -> None:
    """Store a new key; Conflict if the very same key is already stored."""
    try:
        _model(key, api_key).save(condition=ApiKeyModel.key_hash.does_not_exist())
    except PutError as error:
        if is_condition_failure(error):
            raise Conflict("That API key is already in use.") from error
        raise
