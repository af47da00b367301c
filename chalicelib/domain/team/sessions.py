"""Signing in to the dashboard with an e-mail address and a password, and out again.

A session is an opaque random token in a cookie, stored as its SHA-256 with its account, user and expiry. It
acts for its user in its account exactly as an account-level API key of that user does (domain/team/auth.py).
"""

from __future__ import annotations

import ipaddress
import secrets
from datetime import UTC, datetime, timedelta
from functools import cache

from chalicelib.core.sessions import Session
from chalicelib.domain.shared.warm_cache import forget_everything
from chalicelib.domain.team import keys_and_passwords
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.roles import get_role
from chalicelib.domain.team.users import TeamMember
from chalicelib.errors import TooManyRequests, Unauthorized
from chalicelib.store import sessions as store
from chalicelib.store.members import email_key, get_member, passwords_of_email

SESSION_SECONDS = 12 * 3600
# Guessing passwords: at most this many failed sign-ins with one address from one client address per window, then
# 429 there until it ends; one client's wrong guesses do not lock the address's owner out everywhere else.
MAX_FAILED_SIGN_INS = 10
# and from everywhere at once, ten clients' worth: guessing from many client addresses gains no more than that, but
# one guess per window from each client with no failure of its own (so ten guessers do not lock the owner out).
MAX_FAILED_SIGN_INS_EVERYWHERE = 10 * MAX_FAILED_SIGN_INS
FAILURE_WINDOW_SECONDS = 15 * 60
WRONG_CREDENTIALS = "The e-mail address or the password is not right."


@cache
def _unusable_hash() -> str:
    """Checked when the address has no password anywhere, so that an unknown address takes as long as a wrong
    password: the time of an answer says nothing about which part was wrong (made once, on first use)."""
    return keys_and_passwords.hash_password(secrets.token_urlsafe(18))


def sign_in(email: str, password: str, account_name: str | None, client_address: str) -> tuple[str, Session]:
    """A new session (its token and what it stores) for the user with that e-mail address and password, in
    ``account_name`` or, without one, the first account (by id) where both are right; Unauthorized otherwise, and
    TooManyRequests once the address has failed MAX_FAILED_SIGN_INS times from ``client_address`` (the request's
    source), or MAX_FAILED_SIGN_INS_EVERYWHERE times from anywhere, in the current window, unless this client has
    no failure of its own then: its password is checked (one guess a window), so guessers elsewhere do not lock the
    owner out."""
    window, window_ends = failure_window()
    address, client = email_key(email), client_key(client_address)
    # Counted before the password is checked (and given back if it is right), each in one conditional write:
    # requests at once cannot all find a count under its limit and then all guess; of a client's requests at once,
    # only one is told its count is its first.
    own = store.take_sign_in_attempt(address, client, window, window_ends, MAX_FAILED_SIGN_INS)
    if own is None:
        raise TooManyRequests(f"Too many failed sign-ins with this address: try again in {_minutes(window_ends)}.")
    everywhere = store.take_sign_in_attempt(address, None, window, window_ends, MAX_FAILED_SIGN_INS_EVERYWHERE)
    # past the limit everywhere, a client's first guess is checked still, but only MAX_FAILED_SIGN_INS of them a
    # window from each network (an IPv6 /48 holds 65,536 clients' /64s; an IPv4 /24, 256 addresses)
    network = None if everywhere is not None or own > 1 else f"{network_key(client_address)}+past-the-limit"
    if everywhere is None and (
        own > 1 or store.take_sign_in_attempt(address, network, window, window_ends, MAX_FAILED_SIGN_INS) is None
    ):
        store.give_back_sign_in_attempt(address, client, window)  # its password is not checked
        raise TooManyRequests(
            f"Too many failed sign-ins with this address from many places: try again in {_minutes(window_ends)}."
        )
    holders = [
        (member, stored)
        for member, stored in (passwords_of_email(email) if email.strip() else [])  # no key is empty
        if not member.is_collaborator and (account_name is None or member.account_name.lower() == account_name.lower())
    ]
    if not holders:
        keys_and_passwords.password_matches(password, _unusable_hash())
    member = next((member for member, stored in holders if keys_and_passwords.password_matches(password, stored)), None)
    if member is None:  # the attempt stays counted, known address or not: a 429 tells nothing
        raise Unauthorized(WRONG_CREDENTIALS)
    store.give_back_sign_in_attempt(address, client, window)
    if everywhere is not None:
        store.give_back_sign_in_attempt(address, None, window)
    if network is not None:
        store.give_back_sign_in_attempt(address, network, window)
    now = datetime.now(UTC)
    session = Session(
        account_id=member.account_id,
        account_name=member.account_name,
        user_id=member.user_id,
        created=now,
        expires=now + timedelta(seconds=SESSION_SECONDS),
        password_stamp=member.password_stamp,
    )
    token = secrets.token_urlsafe(32)
    store.add_session(token, session)
    return token, session


def failure_window() -> tuple[int, datetime]:
    """The number of the current window of failed sign-ins, and when it ends."""
    window = int(datetime.now(UTC).timestamp()) // FAILURE_WINDOW_SECONDS
    return window, datetime.fromtimestamp((window + 1) * FAILURE_WINDOW_SECONDS, UTC)


def client_key(client_address: str) -> str:
    """Whom failed sign-ins are counted against: the client's IP address, and for IPv6 its /64 (what one
    client is commonly given whole)."""
    return _network_of(client_address, 64, 32)


def network_key(client_address: str) -> str:
    """The network a client's address belongs to, as one holder commonly has it whole: an IPv6 /48, an IPv4 /24."""
    return _network_of(client_address, 48, 24)


def _network_of(client_address: str, ipv6_prefix: int, ipv4_prefix: int) -> str:
    """The address's network of that prefix length ("unknown" for no address); an IPv4 address mapped into IPv6
    counts as itself, and a whole IPv4 address is written without its /32."""
    try:
        ip = ipaddress.ip_address(client_address.strip())
    except ValueError:
        return "unknown"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = ipv6_prefix if isinstance(ip, ipaddress.IPv6Address) else ipv4_prefix
    return str(ip) if prefix == ip.max_prefixlen else str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def _minutes(window_ends: datetime) -> str:
    return f"{max(1, round((window_ends - datetime.now(UTC)).total_seconds() / 60))} minutes"


def sign_out(token: str) -> None:
    """End the session: its cookie names nobody from now on, in every warm function within seconds."""
    store.delete_session(token)
    forget_everything()


def whoami(caller: Caller) -> TeamMember:
    """The user a request acts for, with the name of its role."""
    member = get_member(caller.account_id, caller.user_id)
    if member is None:
        raise Unauthorized()
    return TeamMember(member, get_role(caller, member.role_id).name)
