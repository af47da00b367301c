"""Users and collaborators of an account, keyed by (account_id, user_id), found by e-mail too."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime

from pynamodb.expressions.update import Action
from pynamodb.transactions import TransactWrite

from chalicelib.core.members import Member, Notifications
from chalicelib.store.models import MemberModel
from chalicelib.store.roles import stage_member_count_change
from chalicelib.store.transactions import atomically, claim, email_claim, release, still_at


def password_stamp(password_hash: str | None) -> str | None:
    """A short digest of the stored (salted) password hash: equal while the password is unchanged."""
    return hashlib.sha256(password_hash.encode()).hexdigest()[:32] if password_hash else None


def email_key(email: str) -> str:
    """E-mail addresses compare without regard to case."""
    return email.strip().lower()


def _member(model: MemberModel) -> Member:
    return Member(
        account_id=int(model.account_id),
        account_name=model.account_name,
        user_id=int(model.user_id),
        email=model.email,
        full_name=model.full_name or "",
        role_id=int(model.role_id),
        is_owner=bool(model.is_owner),
        is_collaborator=bool(model.is_collaborator),
        created=model.created,
        updated=model.updated,
        revision=int(model.revision or 0),
        password_stamp=password_stamp(model.password_hash),
        notifications=Notifications(
            successful_build=model.successful_build_notification,
            failed_build=model.failed_build_notification,
            notify_when_build_status_changed_only=bool(model.notify_when_build_status_changed_only),
            successful_deployment=model.successful_deployment_notification,
            failed_deployment=model.failed_deployment_notification,
        ),
    )


def get_member(account_id: int, user_id: int) -> Member | None:
    """The account's user or collaborator with that id, or None."""
    try:
        return _member(MemberModel.get(account_id, user_id))
    except MemberModel.DoesNotExist:
        return None


def list_members(account_id: int) -> list[Member]:
    """Every user and collaborator of the account, in id order."""
    return [_member(model) for model in MemberModel.query(account_id)]


def memberships_of_email(email: str) -> list[Member]:
    """Every account membership of an e-mail address."""
    return [_member(model) for model in MemberModel.by_email.query(email_key(email))]


def passwords_of_email(email: str) -> list[tuple[Member, str]]:
    """The e-mail address's memberships that have a password, each with its stored hash (for signing in)."""
    return [
        (_member(model), model.password_hash)
        for model in MemberModel.by_email.query(email_key(email))
        if model.password_hash
    ]


def stage_new_member(transaction: TransactWrite, member: Member, password_hash: str | None) -> None:
    """Add to ``transaction`` a new member with its e-mail claim, counting it on its role."""
    model = MemberModel(
        member.account_id,
        member.user_id,
        account_name=member.account_name,
        email=member.email,
        email_key=email_key(member.email),
        full_name=member.full_name,
        role_id=member.role_id,
        is_owner=member.is_owner,
        is_collaborator=member.is_collaborator,
        password_hash=password_hash,
        created=member.created,
    )
    transaction.save(model, condition=MemberModel.user_id.does_not_exist())
    claim(transaction, email_claim(member.account_id, email_key(member.email)))


def add_member(member: Member, password_hash: str | None) -> None:
    """Store a new member of an account; Conflict if its e-mail is taken there or its role vanished."""
    with atomically(f"'{member.email}' is already a member of this account, or the role was deleted.") as tx:
        stage_new_member(tx, member, password_hash)
        stage_member_count_change(tx, member.account_id, member.role_id, +1)


def update_member(before: Member, after: Member, password_hash: str | None = None) -> Member:
    """Write ``after`` over ``before`` (fields, role, e-mail), a new password hash when given; Conflict if the
    e-mail is taken or the member changed since ``before``."""
    now = datetime.now(UTC)
    after = replace(after, updated=now, revision=before.revision + 1)
    notes = after.notifications
    actions: list[Action] = [
        MemberModel.full_name.set(after.full_name),
        MemberModel.email.set(after.email),
        MemberModel.email_key.set(email_key(after.email)),
        MemberModel.role_id.set(after.role_id),
        MemberModel.successful_build_notification.set(notes.successful_build),
        MemberModel.failed_build_notification.set(notes.failed_build),
        MemberModel.notify_when_build_status_changed_only.set(notes.notify_when_build_status_changed_only),
        MemberModel.successful_deployment_notification.set(notes.successful_deployment),
        MemberModel.failed_deployment_notification.set(notes.failed_deployment),
        MemberModel.updated.set(now),
        MemberModel.revision.set(after.revision),
    ]
    if password_hash is not None:
        actions.append(MemberModel.password_hash.set(password_hash))
    unchanged = MemberModel.user_id.exists() & still_at(MemberModel.revision, before.revision)
    with atomically(f"'{after.email}' is already a member of this account, or the user changed meanwhile.") as tx:
        tx.update(MemberModel(before.account_id, before.user_id), actions=actions, condition=unchanged)
        if after.role_id != before.role_id:
            stage_member_count_change(tx, before.account_id, before.role_id, -1)
            stage_member_count_change(tx, before.account_id, after.role_id, +1)
        if email_key(after.email) != email_key(before.email):
            release(tx, email_claim(before.account_id, email_key(before.email)))
            claim(tx, email_claim(before.account_id, email_key(after.email)))
    return after


def delete_member(member: Member) -> None:
    """Remove the member from its account, freeing its e-mail and its place on its role."""
    with atomically("The user changed meanwhile; try again.") as tx:
        tx.delete(
            MemberModel(member.account_id, member.user_id),
            condition=MemberModel.user_id.exists() & (MemberModel.role_id == member.role_id),
        )
        stage_member_count_change(tx, member.account_id, member.role_id, -1)
        release(tx, email_claim(member.account_id, email_key(member.email)))
