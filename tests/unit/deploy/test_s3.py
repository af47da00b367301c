"""An appveyor.yml S3 entry delivers with keys or a role of its own, never the service's: no IO."""

from __future__ import annotations

import pytest

from chalicelib.deploy.s3 import inline_refusal


@pytest.mark.parametrize(
    "settings",
    [
        {"bucket": "b", "access_key_id": "AKIA", "secret_access_key": "s"},
        {"bucket": "b", "role_arn": "arn:aws:iam::123456789012:role/deploy"},
    ],
)
def test_an_entry_with_its_own_keys_or_role_may_deliver(settings: dict[str, str]) -> None:
    assert inline_refusal(settings) is None


@pytest.mark.parametrize("settings", [{"bucket": "b"}, {"bucket": "b", "access_key_id": "AKIA"}])
def test_an_entry_that_would_borrow_the_services_role_is_refused_saying_what_it_needs(settings: dict[str, str]) -> None:
    refusal = inline_refusal(settings)

    assert refusal is not None and "access_key_id and secret_access_key, or role_arn" in refusal
