"""Which ``secure:`` values are another service's ciphertext (AppVeyor's), never to be taken for a plain value."""

from __future__ import annotations

import base64
import os

import pytest

from chalicelib.domain.shared.secrets import foreign_ciphertext, is_encrypted_value, is_token


@pytest.mark.parametrize("size", [16, 32, 48, 64, 96])
def test_the_base64_of_whole_aes_blocks_is_appveyors_ciphertext(size: int) -> None:
    assert foreign_ciphertext(base64.b64encode(os.urandom(size)).decode())


@pytest.mark.parametrize(
    "value",
    [
        "newplain",  # a plain secret, as settings YAML of one configuration takes it to encrypt
        "correct-horse-battery-staple",
        base64.b64encode(bytes(range(33))).decode(),  # base64, but not of whole blocks
        "ghp_" + "a" * 36,  # a GitHub token
        "cvy2:" + base64.b64encode(bytes(range(48))).decode(),  # Conveyor's own
        "cvya:" + base64.b64encode(bytes(range(48))).decode(),
        42,
    ],
)
def test_plain_values_and_conveyors_tokens_are_not(value: object) -> None:
    assert not foreign_ciphertext(value)


def test_values_of_the_encrypt_endpoint_are_tokens_bound_to_no_field() -> None:
    for prefix in ("cvya:", "cvyp:"):
        assert is_token(prefix + "x") and is_encrypted_value(prefix + "x")
    assert not is_encrypted_value("cvy2:x")
