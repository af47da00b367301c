"""The body of POST /api/account/encrypt (AppVeyor's endpoint): ``plainValue``, and Conveyor's optional
``projectSlug``; as JSON, or as a form (conda-forge's conda-smithy sends ``requests.post(url, data={...})``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from chalicelib.errors import Invalid
from chalicelib.wire.fields import Fields

FORM = "application/x-www-form-urlencoded"
_NAMES = ("plainValue", "projectSlug")


@dataclass(frozen=True)
class EncryptRequest:
    """What to encrypt, and the project it is for (None: any project of the caller's account)."""

    plain_value: str
    project_slug: str | None


def is_form(content_type: str | None) -> bool:
    """Whether a body of this Content-Type is a form (else it is read as JSON, whatever it says)."""
    return (content_type or "").split(";")[0].strip().lower() == FORM


def encrypt_request(body: Any) -> EncryptRequest:
    """The request a body (a JSON object, or a form's fields) makes."""
    fields = Fields(body)
    plain, slug = fields.text("plainValue", max_length=2**16), fields.optional_text("projectSlug")
    # Fields refuses text UTF-8 cannot carry (JSON's \\ud800, a form's %ED%A0%80): it would be encrypted as
    # something else than was sent, or not at all
    return EncryptRequest(plain, slug)


def form_fields(text: str) -> dict[str, str]:
    """The fields of a form body we read (a name sent twice is a 400)."""
    try:
        found = parse_qs(
            text,
            keep_blank_values=True,
            strict_parsing=bool(text),
            max_num_fields=len(_NAMES) + 8,
            errors="surrogateescape",  # bytes that are not UTF-8 stay apart, to be refused (never replaced)
        )
    except ValueError as error:
        raise Invalid(f"The request body is not a form (name=value&...): {error}") from error
    for name in _NAMES:
        if len(found.get(name, [])) > 1:
            raise Invalid(f"{name} is sent more than once.")
    return {name: values[0] for name, values in found.items() if name in _NAMES}
