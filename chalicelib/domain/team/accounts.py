"""Accounts and their API keys: what the operator command and the local stack's bootstrap do."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.core.accounts import Account
from chalicelib.core.api_keys import ApiKey
from chalicelib.core.members import Member
from chalicelib.core.roles import Role
from chalicelib.domain.shared.validation import valid_account_name, valid_email
from chalicelib.domain.team.keys_and_passwords import is_user_level_key, new_api_key
from chalicelib.domain.team.permissions import ADMINISTRATOR, BUILT_IN_ROLES
from chalicelib.errors import Conflict, NotFound
from chalicelib.store import counters
from chalicelib.store.accounts import create_account as store_account
from chalicelib.store.accounts import get_account_by_name
from chalicelib.store.api_keys import add_api_key, get_api_key
from chalicelib.store.members import memberships_of_email


def create_account(name: str, admin_email: str, api_key: str | None = None) -> str:
    """A new account with its built-in roles and its owner (an administrator); returns the owner's key."""
    name = valid_account_name(name)
    admin_email = valid_email(admin_email, "adminEmail")
    if get_account_by_name(name) is not None:
        raise Conflict(f"An account named '{name}' already exists.")
    key = api_key or new_api_key()
    if get_api_key(key) is not None:
        raise Conflict("That API key is already in use.")
    now = datetime.now(UTC)
    account = Account(account_id=counters.next_value(counters.ACCOUNTS), name=name, created=now)
    last_id = counters.next_value(counters.PRINCIPALS, len(BUILT_IN_ROLES) + 1)
    first_id = last_id - len(BUILT_IN_ROLES)
    roles = [
        Role(account.account_id, first_id + index, role_name, True, frozenset(granted), now)
        for index, (role_name, granted) in enumerate(BUILT_IN_ROLES.items())
    ]
    admin_role = next(role for role in roles if role.name == ADMINISTRATOR)
    owner = Member(
        account_id=account.account_id,
        account_name=name,
        user_id=last_id,
        email=admin_email,
        full_name=admin_email.split("@")[0],
        role_id=admin_role.role_id,
        is_owner=True,
        is_collaborator=False,
        created=now,
    )
    store_account(account, roles, owner, key, _key_for(owner, key))
    return key


def create_api_key(account_name: str, email: str, api_key: str | None = None) -> str:
    """A new key for an existing user of the account; a ``v2.`` key is user-level. Returns the key."""
    member = _member_by_email(account_name, email)
    key = api_key or new_api_key()
    add_api_key(key, _key_for(member, key))
    return key


def ensure_account(name: str, admin_email: str, api_key: str | None) -> tuple[str, bool]:
    """The local stack's bootstrap: the account and its owner if missing, and a key that works.

    Returns the key and whether the account was created. Safe to repeat with the same key.
    """
    if get_account_by_name(name) is None:
        return create_account(name, admin_email, api_key), True
    if api_key is not None:
        existing = get_api_key(api_key)
        member = _member_by_email(name, admin_email)
        if existing is not None and existing.user_id == member.user_id:
            return api_key, False
    return create_api_key(name, admin_email, api_key), False


def _key_for(member: Member, key: str) -> ApiKey:
    """What ``key`` acts for: the member's account, or every account of the user for a ``v2.`` key."""
    if is_user_level_key(key):
        return ApiKey(user_id=member.user_id, account_id=None, account_name=None)
    return ApiKey(user_id=member.user_id, account_id=member.account_id, account_name=member.account_name)


def _member_by_email(account_name: str, email: str) -> Member:
    account = get_account_by_name(account_name)
    if account is None:
        raise NotFound(f"No account named '{account_name}'.")
    for member in memberships_of_email(email):
        if member.account_id == account.account_id:
            return member
    raise NotFound(f"No user '{email}' in account '{account.name}'.")
