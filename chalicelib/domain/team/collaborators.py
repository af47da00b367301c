"""Collaborators: users of other accounts (or new e-mail addresses) given a role in this account."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.core.members import Member
from chalicelib.domain.shared.validation import valid_email
from chalicelib.domain.shared.warm_cache import forget_everything
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.roles import role_exists
from chalicelib.domain.team.users import assign_role, free_email, may_change, may_give, team_member
from chalicelib.errors import Conflict
from chalicelib.store import counters
from chalicelib.store import members as store


def add_collaborator(caller: Caller, email: str, role_id: int) -> None:
    """Give the person behind ``email`` a role in the caller's account, under their own user id."""
    email = free_email(caller, valid_email(email))
    may_give(caller, role_exists(caller, role_id))
    elsewhere = store.memberships_of_email(email)
    # Their own account's record (not a collaboration) names them best.
    elsewhere.sort(key=lambda member: member.is_collaborator)
    if elsewhere and store.get_member(caller.account_id, elsewhere[0].user_id) is not None:
        raise Conflict(f"'{email}' is already a member of this account.")
    member = Member(
        account_id=caller.account_id,
        account_name=caller.account_name,
        user_id=elsewhere[0].user_id if elsewhere else counters.next_value(counters.PRINCIPALS),
        email=email,
        full_name=elsewhere[0].full_name if elsewhere else "",
        role_id=role_id,
        is_owner=False,
        is_collaborator=True,
        created=datetime.now(UTC),
    )
    store.add_member(member, None)


def update_collaborator(caller: Caller, user_id: int, role_id: int) -> None:
    """Give a collaborator another role."""
    assign_role(caller, team_member(caller, user_id, collaborator=True).member, role_id)


def delete_collaborator(caller: Caller, user_id: int) -> None:
    """Take a collaborator's access to the account away (their own account is untouched)."""
    member = team_member(caller, user_id, collaborator=True).member
    may_change(caller, member)
    store.delete_member(member)
    forget_everything()
