"""POST /api/account/encrypt: a value encrypted for ``secure:`` in the caller's account's appveyor.yml files."""

from __future__ import annotations

from chalice import Response

from chalicelib.api.calls import Call
from chalicelib.api.http import plain_text
from chalicelib.domain.projects import encrypted_values
from chalicelib.wire.encrypted_values import encrypt_request, form_fields, is_form


def encrypt_value(call: Call) -> Response:
    """The text to put after ``secure:``, as text/plain (AppVeyor's answer, which tools store as it comes)."""
    form = is_form(call.request.headers.get("content-type"))
    sent = encrypt_request(form_fields(call.text()) if form else call.json())
    return plain_text(encrypted_values.encrypt_value(call.caller, sent.plain_value, sent.project_slug))
