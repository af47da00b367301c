"""Accounts, found by the lower-cased name that URLs carry."""

from __future__ import annotations

from chalicelib.core.accounts import Account
from chalicelib.core.api_keys import ApiKey
from chalicelib.core.members import Member
from chalicelib.core.roles import Role
from chalicelib.store.api_keys import stage_new_api_key
from chalicelib.store.members import stage_new_member
from chalicelib.store.models import AccountModel
from chalicelib.store.roles import stage_new_role
from chalicelib.store.transactions import atomically


def account_name_key(name: str) -> str:
    """Account names in URLs compare without regard to case."""
    return name.strip().lower()


def get_account_by_name(name: str) -> Account | None:
    """The account of that name, or None."""
    try:
        model = AccountModel.get(account_name_key(name))
    except AccountModel.DoesNotExist:
        return None
    return Account(account_id=int(model.account_id), name=model.name, created=model.created)


def create_account(account: Account, roles: list[Role], owner: Member, owner_key: str, owner_api_key: ApiKey) -> None:
    """Store a new account with its built-in roles, its owner and the owner's key, all or nothing."""
    with atomically(f"An account named '{account.name}' already exists.") as transaction:
        transaction.save(
            AccountModel(
                account_name_key(account.name),
                name=account.name,
                account_id=account.account_id,
                created=account.created,
            ),
            condition=AccountModel.name_key.does_not_exist(),
        )
        for role in roles:
            stage_new_role(transaction, role, member_count=1 if role.role_id == owner.role_id else 0)
        stage_new_member(transaction, owner, None)
        stage_new_api_key(transaction, owner_key, owner_api_key)
