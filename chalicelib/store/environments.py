"""Deployment environments, keyed by (account_id, environment_id), also found by their access key's hash.

Names are unique per account and access keys unique everywhere, through claims written in the same
transaction as the environment; updates and deletes hold only if the revision read is still current.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from pynamodb.expressions.update import Action
from pynamodb.transactions import TransactWrite

from chalicelib.core.environments import Environment
from chalicelib.errors import Conflict, NotFound
from chalicelib.store.delivery_models import EnvironmentModel
from chalicelib.store.transactions import atomically, claim, condition_held, is_claimed, release

ENVIRONMENT_NOT_FOUND = "Environment not found or access denied."


def _environment(model: EnvironmentModel) -> Environment:
    return Environment(
        account_id=int(model.account_id),
        environment_id=int(model.environment_id),
        name=model.name,
        provider=model.provider,
        access_key=model.access_key,
        access_key_hash=model.access_key_hash,
        settings=model.settings,
        created=model.created,
        updated=model.updated,
        revision=int(model.revision),
    )


def environment_name_key(name: str) -> str:
    """Environment names are unique per account without regard to case."""
    return name.strip().lower()


def environment_name_claim(account_id: int, name: str) -> str:
    return f"environment#{account_id}#{environment_name_key(name)}"


def access_key_claim(access_key_hash: str) -> str:
    return f"environment-key#{access_key_hash}"


def name_taken(account_id: int, name: str) -> bool:
    """Whether another environment of the account holds ``name`` (a read for clear messages)."""
    return is_claimed(environment_name_claim(account_id, name))


def access_key_taken(access_key_hash: str) -> bool:
    """Whether some environment holds the access key of that hash."""
    return is_claimed(access_key_claim(access_key_hash))


def get_environment(account_id: int, environment_id: int) -> Environment | None:
    """The environment, or None when the account has no environment of that id."""
    try:
        return _environment(EnvironmentModel.get(account_id, environment_id, consistent_read=True))
    except EnvironmentModel.DoesNotExist:
        return None


def list_environments(account_id: int) -> list[Environment]:
    """Every environment of the account, in id (creation) order."""
    return [_environment(model) for model in EnvironmentModel.query(account_id)]


def get_environment_by_access_key_hash(access_key_hash: str) -> Environment | None:
    """The one environment whose access key has that hash, or None."""
    found = [_environment(model) for model in EnvironmentModel.by_access_key.query(access_key_hash, limit=2)]
    return found[0] if len(found) == 1 else None  # the key claim makes two impossible; refuse rather than guess


def add_environment(environment: Environment) -> None:
    """Store a new environment; Conflict if its name or access key is taken."""
    model = EnvironmentModel(
        environment.account_id,
        environment.environment_id,
        name=environment.name,
        provider=environment.provider,
        access_key=environment.access_key,
        access_key_hash=environment.access_key_hash,
        settings=environment.settings,
        created=environment.created,
        revision=1,
    )
    with atomically(f"An environment named '{environment.name}' already exists.") as transaction:
        transaction.save(model, condition=EnvironmentModel.environment_id.does_not_exist())
        claim(transaction, environment_name_claim(environment.account_id, environment.name))
        claim(transaction, access_key_claim(environment.access_key_hash))


def save_environment(before: Environment, after: Environment) -> Environment:
    """Write ``after``; Conflict if the environment changed since ``before`` was read (or a name or key is taken)."""
    now = datetime.now(UTC)
    actions: list[Action] = [
        EnvironmentModel.name.set(after.name),
        EnvironmentModel.provider.set(after.provider),
        EnvironmentModel.access_key.set(after.access_key),
        EnvironmentModel.access_key_hash.set(after.access_key_hash),
        EnvironmentModel.settings.set(after.settings),
        EnvironmentModel.updated.set(now),
        EnvironmentModel.revision.add(1),
    ]
    try:
        with atomically("The environment changed meanwhile.") as transaction:
            transaction.update(
                EnvironmentModel(before.account_id, before.environment_id),
                actions=actions,
                condition=EnvironmentModel.revision == before.revision,
            )
            _move_claim(
                transaction,
                environment_name_claim(before.account_id, before.name),
                environment_name_claim(before.account_id, after.name),
            )
            _move_claim(transaction, access_key_claim(before.access_key_hash), access_key_claim(after.access_key_hash))
    except Conflict as error:
        raise _explain(before, after) from error
    return replace(after, created=before.created, updated=now, revision=before.revision + 1)


def scan_environments() -> Iterator[Environment]:
    """Every environment of every account: a Scan, for migrations only (never on a request's path)."""
    for model in EnvironmentModel.scan():
        yield _environment(model)


def rewrite_settings(environment: Environment, settings: dict[str, Any]) -> bool:
    """Replace the environment's stored settings, if it is still at the revision read (not counted as a user's
    update: ``updated`` stays); False when it changed or was deleted meanwhile. For migrations."""
    return condition_held(
        lambda: EnvironmentModel(environment.account_id, environment.environment_id).update(
            actions=[EnvironmentModel.settings.set(settings), EnvironmentModel.revision.add(1)],
            condition=EnvironmentModel.revision == environment.revision,
        )
    )


def delete_environment(environment: Environment) -> None:
    """Delete the environment and free its name and key; Conflict if it changed since it was read."""
    try:
        with atomically("The environment changed meanwhile.") as transaction:
            transaction.delete(
                EnvironmentModel(environment.account_id, environment.environment_id),
                condition=EnvironmentModel.revision == environment.revision,
            )
            release(transaction, environment_name_claim(environment.account_id, environment.name))
            release(transaction, access_key_claim(environment.access_key_hash))
    except Conflict as error:
        raise _explain(environment, environment) from error


def _move_claim(transaction: TransactWrite, old: str, new: str) -> None:
    if old != new:
        release(transaction, old)
        claim(transaction, new)


def _explain(before: Environment, after: Environment) -> Exception:
    """Why a conditional write of the environment failed: gone, changed, or a claim held by another."""
    current = get_environment(before.account_id, before.environment_id)
    if current is None:
        return NotFound(ENVIRONMENT_NOT_FOUND)
    if current.revision != before.revision:
        return Conflict("The environment changed meanwhile; read it again and retry.")
    if environment_name_key(after.name) != environment_name_key(before.name) and name_taken(
        before.account_id, after.name
    ):
        return Conflict(f"An environment named '{after.name.strip()}' already exists.")
    return Conflict("That environment access key is in use; choose another.")
