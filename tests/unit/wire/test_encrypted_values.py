"""The body of POST /api/account/encrypt: JSON, or a form as conda-smithy sends it."""

from __future__ import annotations

import pytest

from chalicelib.errors import Invalid
from chalicelib.wire.encrypted_values import EncryptRequest, encrypt_request, form_fields, is_form


def test_a_form_is_known_by_its_content_type_whatever_its_charset() -> None:
    assert is_form("application/x-www-form-urlencoded; charset=utf-8")
    assert is_form("Application/X-WWW-Form-Urlencoded")
    assert not is_form("application/json") and not is_form(None)


def test_a_forms_fields_are_decoded_and_others_left_out() -> None:
    fields = form_fields("plainValue=a%2Bb%3Dc&projectSlug=my-app&other=1")

    assert fields == {"plainValue": "a+b=c", "projectSlug": "my-app"}
    assert encrypt_request(fields) == EncryptRequest("a+b=c", "my-app")


def test_a_value_sent_twice_is_refused() -> None:
    with pytest.raises(Invalid, match="plainValue is sent more than once"):
        form_fields("plainValue=one&plainValue=two")


def test_a_project_slug_is_optional() -> None:
    assert encrypt_request({"plainValue": "secret"}) == EncryptRequest("secret", None)
