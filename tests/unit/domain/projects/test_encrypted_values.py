"""What POST /api/account/encrypt refuses before any KMS call: a value the log could not mask, or KMS not take."""

from __future__ import annotations

import pytest

from chalicelib.domain.projects.encrypted_values import encrypt_value
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Invalid

MEMBER = Caller(1, "acct", 1, 1, "User", frozenset())


@pytest.mark.parametrize(("plain", "said"), [("  ab  ", "at least 3 characters"), ("x" * 4097, "at most 4096 bytes")])
def test_a_value_the_log_cannot_mask_or_kms_cannot_take_is_refused(plain: str, said: str) -> None:
    with pytest.raises(Invalid, match=said):
        encrypt_value(MEMBER, plain, None)
