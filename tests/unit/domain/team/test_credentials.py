"""Passwords hash with a salt and check back; API keys are random, user-level ones carry ``v2.``."""

from __future__ import annotations

from chalicelib.domain.team.keys_and_passwords import (
    USER_KEY_PREFIX,
    hash_password,
    is_user_level_key,
    new_api_key,
    new_password,
    password_matches,
)


def test_password_matches_the_hash_made_from_it() -> None:
    stored = hash_password("correct horse battery staple")

    assert password_matches("correct horse battery staple", stored)


def test_other_password_does_not_match() -> None:
    stored = hash_password("correct horse battery staple")

    assert not password_matches("correct horse battery stapler", stored)
    assert not password_matches("", stored)
    assert not password_matches("Correct horse battery staple", stored)


def test_same_password_hashes_differently_each_time() -> None:
    first, second = hash_password("s3cret-password"), hash_password("s3cret-password")

    assert first != second
    assert password_matches("s3cret-password", first)
    assert password_matches("s3cret-password", second)


def test_hash_does_not_contain_the_password() -> None:
    stored = hash_password("plainly-visible")

    assert "plainly-visible" not in stored
    assert stored.startswith("scrypt$")


def test_non_ascii_password_round_trips() -> None:
    stored = hash_password("pässwörd-密码")

    assert password_matches("pässwörd-密码", stored)
    assert not password_matches("passwort-密码", stored)


def test_user_level_key_starts_with_v2() -> None:
    key = new_api_key(user_level=True)

    assert key.startswith("v2.")
    assert USER_KEY_PREFIX == "v2."
    assert len(key) > len("v2.") + 16
    assert is_user_level_key(key)


def test_account_level_key_has_no_v2_prefix() -> None:
    key = new_api_key()

    assert not key.startswith("v2.")
    assert not is_user_level_key(key)


def test_new_keys_and_passwords_are_different_every_time() -> None:
    assert len({new_api_key() for _ in range(50)}) == 50
    assert len({new_api_key(user_level=True) for _ in range(50)}) == 50
    assert len({new_password() for _ in range(50)}) == 50
