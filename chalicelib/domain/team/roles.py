"""Roles of an account: the two built-in ones, which never change, and custom ones."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from chalicelib.core.roles import Role
from chalicelib.domain.shared.validation import invalid, valid_name
from chalicelib.domain.shared.warm_cache import WarmCache, forget_everything
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.permissions import Permission
from chalicelib.errors import Conflict, Forbidden, NotFound
from chalicelib.store import counters
from chalicelib.store import roles as store
from chalicelib.store.transactions import is_claimed, role_name_claim

MAX_ROLE_NAME_LENGTH = 50


def list_roles(caller: Caller) -> list[Role]:
    """Every role of the caller's account (as a warm function saw it moments ago: see domain/shared/warm_cache.py); none
    to a visitor without a key (a public project's security descriptor names no role)."""
    if caller.is_visitor:
        return []
    return _account_roles.get(caller.account_id, lambda: store.list_roles(caller.account_id))


_account_roles: WarmCache[list[Role]] = WarmCache()


def get_role(caller: Caller, role_id: int) -> Role:
    """One role of the caller's account; NotFound otherwise."""
    role = store.get_role(caller.account_id, role_id)
    if role is None:
        raise NotFound("Role not found.")
    return role


def role_exists(caller: Caller, role_id: int, field: str = "roleId") -> Role:
    """The role a request body names; a 400 naming ``field`` when the account has no such role."""
    role = store.get_role(caller.account_id, role_id)
    if role is None:
        raise invalid(field, f"{field}: there is no role {role_id} in this account.")
    return role


def add_role(caller: Caller, name: str) -> Role:
    """A new custom role that grants nothing yet."""
    name = _free_name(caller, valid_name(name, "name", MAX_ROLE_NAME_LENGTH))
    role = Role(
        account_id=caller.account_id,
        role_id=counters.next_value(counters.PRINCIPALS),
        name=name,
        is_system=False,
        allowed=frozenset(),
        created=datetime.now(UTC),
    )
    store.add_role(role)
    forget_everything()
    return role


def update_role(caller: Caller, role_id: int, name: str, allowed: Iterable[Permission]) -> Role:
    """Rename a custom role and set exactly the permissions it grants."""
    role = _custom_role(caller, role_id, "changed")
    granted = {permission.value for permission in allowed}
    may_set(caller, role, granted)
    name = valid_name(name, "name", MAX_ROLE_NAME_LENGTH)
    if store.role_name_key(name) != store.role_name_key(role.name):
        _free_name(caller, name)
    updated = store.update_role(role, name, granted)
    forget_everything()
    return updated


def delete_role(caller: Caller, role_id: int) -> None:
    """Delete a custom role that nobody holds."""
    role = _custom_role(caller, role_id, "deleted")
    if store.role_in_use(caller.account_id, role_id):
        raise Conflict(f"The role '{role.name}' is assigned to users and cannot be deleted.")
    store.delete_role(role)
    forget_everything()


def may_set(caller: Caller, role: Role, granted: set[str]) -> None:
    """Forbidden unless the caller may make ``role`` grant ``granted``: an Administrator may; anyone else changes no
    role they are in, and grants no permission their own role does not (so nobody raises their own role, or one
    they or a friend are then given, past theirs). Permissions the role grants already may stay, or go."""
    if caller.is_administrator:
        return
    if role.role_id == caller.role_id:
        raise Forbidden(f"Only an Administrator can change the role you are in ('{role.name}').")
    beyond = sorted(granted - role.allowed - caller.permissions)
    if beyond:
        raise Forbidden(f"You cannot grant permissions your role does not have: {', '.join(beyond)}.")


def _custom_role(caller: Caller, role_id: int, change: str) -> Role:
    role = get_role(caller, role_id)
    if role.is_system:
        raise Conflict(f"The built-in role '{role.name}' cannot be {change}.")
    return role


def _free_name(caller: Caller, name: str) -> str:
    if is_claimed(role_name_claim(caller.account_id, store.role_name_key(name))):
        raise Conflict(f"A role named '{name}' already exists.")
    return name
