"""Roles of an account, keyed by (account_id, role_id)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from pynamodb.transactions import TransactWrite

from chalicelib.core.roles import Role
from chalicelib.store.models import RoleModel
from chalicelib.store.transactions import atomically, claim, release, role_name_claim, still_at


def _role(model: RoleModel) -> Role:
    return Role(
        account_id=int(model.account_id),
        role_id=int(model.role_id),
        name=model.name,
        is_system=bool(model.is_system),
        allowed=frozenset(model.allowed or ()),
        created=model.created,
        updated=model.updated,
        revision=int(model.revision or 0),
    )


def role_name_key(name: str) -> str:
    """Role names are unique per account without regard to case."""
    return name.strip().lower()


def get_role(account_id: int, role_id: int) -> Role | None:
    """The role, or None when the account has no role of that id."""
    try:
        return _role(RoleModel.get(account_id, role_id))
    except RoleModel.DoesNotExist:
        return None


def list_roles(account_id: int) -> list[Role]:
    """Every role of the account, in id order (the built-in ones first, as they are made first)."""
    return [_role(model) for model in RoleModel.query(account_id)]


def stage_new_role(transaction: TransactWrite, role: Role, member_count: int = 0) -> None:
    """Add to ``transaction`` the creation of ``role`` with its name claim."""
    model = RoleModel(
        role.account_id,
        role.role_id,
        name=role.name,
        is_system=role.is_system,
        allowed=set(role.allowed) or None,
        member_count=member_count,
        created=role.created,
    )
    transaction.save(model, condition=RoleModel.role_id.does_not_exist())
    claim(transaction, role_name_claim(role.account_id, role_name_key(role.name)))


def stage_member_count_change(transaction: TransactWrite, account_id: int, role_id: int, delta: int) -> None:
    """Add to ``transaction`` a change of how many members hold the role (which must exist)."""
    transaction.update(
        RoleModel(account_id, role_id),
        actions=[RoleModel.member_count.add(delta)],
        condition=RoleModel.role_id.exists(),
    )


def add_role(role: Role) -> None:
    """Store a new role; Conflict if its name is taken."""
    with atomically(f"A role named '{role.name}' already exists.") as transaction:
        stage_new_role(transaction, role)


def update_role(before: Role, name: str, allowed: Iterable[str]) -> Role:
    """Rename the role and set its permissions; Conflict if the new name is taken or it changed since ``before``."""
    now = datetime.now(UTC)
    allowed_set = set(allowed)
    model = RoleModel(before.account_id, before.role_id)
    with atomically(f"A role named '{name}' already exists, or the role changed meanwhile.") as transaction:
        transaction.update(
            model,
            actions=[
                RoleModel.name.set(name),
                RoleModel.allowed.set(allowed_set) if allowed_set else RoleModel.allowed.remove(),
                RoleModel.updated.set(now),
                RoleModel.revision.set(before.revision + 1),
            ],
            condition=RoleModel.role_id.exists()
            & still_at(RoleModel.revision, before.revision)
            & (RoleModel.is_system == False),  # noqa: E712
        )
        if role_name_key(name) != role_name_key(before.name):
            release(transaction, role_name_claim(before.account_id, role_name_key(before.name)))
            claim(transaction, role_name_claim(before.account_id, role_name_key(name)))
    return Role(
        before.account_id, before.role_id, name, False, frozenset(allowed_set), before.created, now, before.revision + 1
    )


def delete_role(role: Role) -> None:
    """Delete a custom role nobody holds; Conflict if someone was given it meanwhile."""
    with atomically(f"The role '{role.name}' is assigned to users and cannot be deleted.") as transaction:
        transaction.delete(
            RoleModel(role.account_id, role.role_id),
            condition=(RoleModel.member_count == 0) & (RoleModel.is_system == False),  # noqa: E712
        )
        release(transaction, role_name_claim(role.account_id, role_name_key(role.name)))


def role_in_use(account_id: int, role_id: int) -> bool:
    """Whether any member holds the role (the count the member writes keep)."""
    try:
        return int(RoleModel.get(account_id, role_id, attributes_to_get=["member_count"]).member_count or 0) > 0
    except RoleModel.DoesNotExist:
        return False
