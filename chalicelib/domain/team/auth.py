"""Who is calling: an API key, or a dashboard session's cookie, resolved to one user acting in one account, with
that user's role; or, on the few reads public projects allow, a visitor without a key (domain/team/visitors.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from chalicelib.core.members import Member
from chalicelib.core.reprs import FieldsRepr
from chalicelib.core.roles import Role
from chalicelib.domain.shared.warm_cache import WarmCache
from chalicelib.domain.team.permissions import ADMINISTRATOR, Permission
from chalicelib.errors import Forbidden, Invalid, NotFound, Unauthorized
from chalicelib.store.accounts import get_account_by_name
from chalicelib.store.api_keys import get_api_key, key_hash
from chalicelib.store.members import get_member
from chalicelib.store.roles import get_role

ACCOUNT_NOT_ACCESSIBLE = "Account not found or access denied."


@dataclass(frozen=True, repr=False)
class Caller(FieldsRepr):
    """The user a request acts for, in the account it acts on."""

    account_id: int
    account_name: str
    user_id: int
    role_id: int
    role_name: str
    permissions: frozenset[str]
    is_administrator: bool = False
    is_visitor: bool = False  # no key: may only view public projects of ``account_id`` (domain/team/access.py)

    def can(self, permission: Permission) -> bool:
        return permission.value in self.permissions

    def require(self, permission: Permission) -> None:
        """Forbidden unless the caller's role grants ``permission``."""
        if not self.can(permission):
            raise Forbidden(f"Your role '{self.role_name}' does not have the '{permission.value}' permission.")


def visitor(account_id: int, account_name: str) -> Caller:
    """A caller without a key, reading a public project of that account: no user, no role, no permission."""
    return Caller(account_id, account_name, 0, 0, "", frozenset(), is_visitor=True)


def bearer_token(authorization: str | None) -> str:
    """The key of an ``Authorization: Bearer <key>`` header; Unauthorized when there is none."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized()
    return token.strip()


def authenticate(
    authorization: str | None,
    account_name: str | None,
    resource_account: str | None = None,
    session_token: str | None = None,
) -> Caller:
    """Resolve the caller of a request (reusing what a warm function resolved moments ago: see
    domain/shared/warm_cache.py).

    ``account_name`` is the account the URL prefix ``/api/account/{name}`` names, if any; ``resource_account``
    the account a resource path names (``/projects/{accountName}/...``). A request without an Authorization
    header may carry ``session_token``, a dashboard session's cookie, which acts as an account-level key of its
    user does. An account-level key acts on its own
    account only, and a resource of another account is simply not found by the domain. A user-level (``v2.``)
    key acts on any account its user belongs to, so the URL must name one, in the prefix or the resource path.
    """
    if session_token is not None and not (authorization or "").strip():
        return _session_caller(session_token, account_name)
    key = bearer_token(authorization)
    names = tuple(name.lower() if name is not None else None for name in (account_name, resource_account))
    return _callers.get((key_hash(key), *names), lambda: _resolve(key, account_name, resource_account))


def _resolve(key: str, account_name: str | None, resource_account: str | None) -> Caller:
    api_key = get_api_key(key)
    if api_key is None:
        raise Unauthorized()
    if api_key.account_id is not None:
        if account_name is not None and account_name.lower() != (api_key.account_name or "").lower():
            raise NotFound(ACCOUNT_NOT_ACCESSIBLE)
        member = get_member(api_key.account_id, api_key.user_id)
        if member is None:  # the key's user was removed from its account
            raise Unauthorized()
    else:
        account_name = account_name or resource_account
        if account_name is None:
            raise Invalid("API is expecting an account parameter: call /api/account/{accountName}/... with a v2 key.")
        account = get_account_by_name(account_name)
        member = None if account is None else get_member(account.account_id, api_key.user_id)
        if member is None:
            raise NotFound(ACCOUNT_NOT_ACCESSIBLE)
    return caller_of(member, get_role(member.account_id, member.role_id))


_callers: WarmCache[Caller] = WarmCache()
_session_callers: WarmCache[tuple[Caller, datetime]] = WarmCache()


def _session_caller(token: str, account_name: str | None) -> Caller:
    """The caller of a session: expired, signed out or of a removed user, it names nobody."""
    names = (key_hash(token), None if account_name is None else account_name.lower())
    caller, expires = _session_callers.get(names, lambda: _resolve_session(token, account_name))
    if expires <= datetime.now(UTC):  # checked on every use: a kept caller outlives no session
        raise Unauthorized()
    return caller


def _resolve_session(token: str, account_name: str | None) -> tuple[Caller, datetime]:
    from chalicelib.store.sessions import get_session  # the dashboard's alone: a key's first request loads none of it

    session = get_session(token)
    if session is None:
        raise Unauthorized()
    if account_name is not None and account_name.lower() != session.account_name.lower():
        raise NotFound(ACCOUNT_NOT_ACCESSIBLE)
    member = get_member(session.account_id, session.user_id)
    if member is None or member.password_stamp != session.password_stamp:  # removed, or its password changed
        raise Unauthorized()
    return caller_of(member, get_role(member.account_id, member.role_id)), session.expires


def caller_of(member: Member, role: Role | None) -> Caller:
    """The caller a member is, with its role's permissions (none when the role is gone)."""
    return Caller(
        account_id=member.account_id,
        account_name=member.account_name,
        user_id=member.user_id,
        role_id=member.role_id,
        role_name=role.name if role else "",
        permissions=role.allowed if role else frozenset(),
        is_administrator=role is not None and role.is_system and role.name == ADMINISTRATOR,
    )
