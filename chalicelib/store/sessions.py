"""Dashboard sessions, found by the SHA-256 of their cookie's token; the token itself is never stored."""

from __future__ import annotations

from datetime import datetime

from pynamodb.exceptions import UpdateError

from chalicelib.core.sessions import Session
from chalicelib.store.api_keys import key_hash  # a token is stored as a key is: its SHA-256
from chalicelib.store.models import CounterModel, SessionModel
from chalicelib.store.transactions import is_condition_failure


def add_session(token: str, session: Session) -> None:
    """Store a new session under its token's hash."""
    SessionModel(
        key_hash(token),
        account_id=session.account_id,
        account_name=session.account_name,
        user_id=session.user_id,
        created=session.created,
        expires=session.expires,
        password_stamp=session.password_stamp,
    ).save(condition=SessionModel.token_hash.does_not_exist())


def get_session(token: str) -> Session | None:
    """The session of the token, expired or not, or None when there is none."""
    try:
        model = SessionModel.get(key_hash(token))
    except SessionModel.DoesNotExist:
        return None
    return Session(
        account_id=int(model.account_id),
        account_name=model.account_name,
        user_id=int(model.user_id),
        created=model.created,
        expires=model.expires,
        password_stamp=model.password_stamp,
    )


def delete_session(token: str) -> None:
    """Forget the session (signing out); nothing happens when there is none."""
    SessionModel(key_hash(token)).delete()


def _failures_key(email_key: str, window: int, client: str | None) -> str:
    # Two prefixes: no e-mail address sent can make one address's count from everywhere another's from one client.
    if client is None:
        return f"sign-in-failures#{window}#{email_key}"
    return f"sign-in-failures-from#{window}#{client}#{email_key}"


def take_sign_in_attempt(
    email_key: str, client: str | None, window: int, window_ends: datetime, limit: int
) -> int | None:
    """Count one more sign-in with the address in the window, from ``client`` (a client address) or, with None,
    from everywhere, unless ``limit`` are counted already (None then): the count with this one.

    One conditional update, so that requests at once cannot all read a count under the limit (each is told the
    count its own write made); the count goes (TTL) some time after the window ends."""
    counter = CounterModel(_failures_key(email_key, window, client))
    try:
        counter.update(
            actions=[CounterModel.value.add(1), CounterModel.expires.set(window_ends)],
            condition=CounterModel.value.does_not_exist() | (CounterModel.value < limit),
        )
    except UpdateError as error:
        if not is_condition_failure(error):
            raise
        return None
    return int(counter.value)


def give_back_sign_in_attempt(email_key: str, client: str | None, window: int) -> None:
    """Uncount an attempt taken in the window: it succeeded, or its password was never checked."""
    CounterModel(_failures_key(email_key, window, client)).update(actions=[CounterModel.value.add(-1)])
