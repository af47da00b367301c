"""Users of an account: add, change, remove; and the user-or-role lookup of GET /api/users/{id}."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from chalicelib.core.members import Member, Notifications
from chalicelib.core.roles import Role
from chalicelib.domain.shared.validation import invalid, valid_email, valid_name, valid_password
from chalicelib.domain.shared.warm_cache import forget_everything
from chalicelib.domain.team import keys_and_passwords
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.permissions import ADMINISTRATOR, USER
from chalicelib.domain.team.roles import get_role, list_roles, role_exists
from chalicelib.errors import Conflict, Forbidden, NotFound
from chalicelib.store import counters
from chalicelib.store import members as store
from chalicelib.store.transactions import email_claim, is_claimed


@dataclass(frozen=True)
class TeamMember:
    """A user or collaborator with the name of its role, as every response shows it."""

    member: Member
    role_name: str


@dataclass(frozen=True)
class NewUser:
    full_name: str
    email: str
    role_id: int
    generate_password: bool
    password: str | None
    confirm_password: str | None


@dataclass(frozen=True)
class UserChange:
    user_id: int
    full_name: str
    email: str
    role_id: int
    password: str | None
    notifications: Notifications | None  # None keeps the stored preferences


def team(caller: Caller, collaborators: bool) -> list[TeamMember]:
    """The account's users, or its collaborators, each with its role's name."""
    role_names = {role.role_id: role.name for role in list_roles(caller)}
    return [
        TeamMember(member, role_names.get(member.role_id, ""))
        for member in store.list_members(caller.account_id)
        if member.is_collaborator == collaborators
    ]


def team_member(caller: Caller, user_id: int, collaborator: bool) -> TeamMember:
    """One user (or collaborator) of the account; NotFound when the id names nobody of that kind."""
    member = store.get_member(caller.account_id, user_id)
    if member is None or member.is_collaborator != collaborator:
        raise NotFound("Collaborator not found." if collaborator else "User not found.")
    return TeamMember(member, get_role(caller, member.role_id).name)


def user_or_role(caller: Caller, principal_id: int) -> TeamMember | Role:
    """GET /api/users/{id}: user and role ids share one sequence, so the id says which it is."""
    member = store.get_member(caller.account_id, principal_id)
    if member is not None and not member.is_collaborator:
        return TeamMember(member, get_role(caller, member.role_id).name)
    try:
        return get_role(caller, principal_id)
    except NotFound:
        raise NotFound("User not found.") from None


def add_user(caller: Caller, new: NewUser) -> None:
    """A new user of the caller's account, with a password given twice or generated."""
    email = free_email(caller, valid_email(new.email))
    full_name = valid_name(new.full_name, "fullName")
    may_give(caller, role_exists(caller, new.role_id))
    if new.generate_password:
        password = keys_and_passwords.new_password()
    else:
        password = valid_password(new.password or "")
        if new.confirm_password != password:
            raise invalid("confirmPassword", "password and confirmPassword do not match.")
    member = Member(
        account_id=caller.account_id,
        account_name=caller.account_name,
        user_id=counters.next_value(counters.PRINCIPALS),
        email=email,
        full_name=full_name,
        role_id=new.role_id,
        is_owner=False,
        is_collaborator=False,
        created=datetime.now(UTC),
    )
    store.add_member(member, keys_and_passwords.hash_password(password))


def update_user(caller: Caller, change: UserChange) -> None:
    """Change a user's details, role, notification preferences and, when given, password."""
    before = team_member(caller, change.user_id, collaborator=False).member
    may_change(caller, before)
    email = valid_email(change.email)
    if store.email_key(email) != store.email_key(before.email):
        free_email(caller, email)
    _assign_role(caller, before, change.role_id)
    password_hash = None
    if change.password:
        password_hash = keys_and_passwords.hash_password(valid_password(change.password))
    after = replace(
        before,
        full_name=valid_name(change.full_name, "fullName"),
        email=email,
        role_id=change.role_id,
        notifications=change.notifications or before.notifications,
    )
    store.update_member(before, after, password_hash)
    forget_everything()


def delete_user(caller: Caller, user_id: int) -> None:
    """Remove a user from the account; the owner stays."""
    member = team_member(caller, user_id, collaborator=False).member
    if member.is_owner:
        raise Conflict("The account owner cannot be deleted.")
    may_change(caller, member)
    store.delete_member(member)
    forget_everything()


def assign_role(caller: Caller, before: Member, role_id: int) -> None:
    """Give a member another role (the owner stays an administrator)."""
    may_change(caller, before)
    _assign_role(caller, before, role_id)
    store.update_member(before, replace(before, role_id=role_id))
    forget_everything()


def _assign_role(caller: Caller, member: Member, role_id: int) -> None:
    if role_id == member.role_id:
        return
    role = role_exists(caller, role_id)
    if member.is_owner:
        raise Conflict("The account owner's role cannot be changed.")
    may_give(caller, role)


def may_change(caller: Caller, member: Member) -> None:
    """Forbidden unless the caller may change the member at all: nobody but the owner changes the owner, and only
    Administrators change Administrators (a role allowed to update users could otherwise take the account)."""
    if member.is_owner and member.user_id != caller.user_id:
        raise Forbidden("Only the account owner can change the account owner.")
    if not caller.is_administrator and _is_administrator(get_role(caller, member.role_id)):
        raise Forbidden("Only an Administrator can change or remove an Administrator.")


def may_give(caller: Caller, role: Role) -> None:
    """Forbidden unless the caller may give ``role``: an Administrator any; anyone else the built-in User role (every
    member's baseline) or a role that grants nothing the caller's own role does not (so nobody raises their own
    role, or a friend's, past theirs)."""
    if caller.is_administrator or (role.is_system and role.name == USER):
        return
    if _is_administrator(role):
        raise Forbidden("Only an Administrator can give the Administrator role.")
    beyond = sorted(role.allowed - caller.permissions)
    if beyond:
        raise Forbidden(f"The role '{role.name}' grants permissions your role does not have: {', '.join(beyond)}.")


def _is_administrator(role: Role) -> bool:
    return role.is_system and role.name == ADMINISTRATOR


def free_email(caller: Caller, email: str) -> str:
    """The e-mail address, unless someone of the account has it already (Conflict)."""
    if is_claimed(email_claim(caller.account_id, store.email_key(email))):
        raise Conflict(f"'{email}' is already a member of this account.")
    return email
