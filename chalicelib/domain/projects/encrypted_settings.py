"""Values of ``POST /api/account/encrypt`` in a settings YAML kept as written (for: items, a list of configurations):
each is replaced, in the text, by its field's own token before the text is stored.

Such a value decrypts in any project of the account (``cvya:``), or anywhere in its project (``cvyp:``); kept as
written, it would be shown by ``GET .../settings/yaml`` to whoever may view the project, who could paste it into
another project's appveyor.yml (issue 43, review). Its field's token (``cvy2:``) decrypts at that field of this project
and nowhere else, as the settings' other forms store it (secrets.protect).
"""

from __future__ import annotations

import re

from chalicelib.domain.configuration.yamlconfig import written_configurations, written_secrets
from chalicelib.domain.shared.secrets import HOW_TO_ENCRYPT, Owner, is_encrypted_value, protect, secret_fields
from chalicelib.domain.shared.validation import invalid
from chalicelib.errors import Invalid

_BASE64 = "A-Za-z0-9+/="


def bound_encrypted_values(owner: Owner, text: str) -> tuple[str, dict[str, str]]:
    """The text with each encrypted value replaced by its field's own token, and the tokens made (by token: its
    field). A value written at two fields, or where no build reads it, is a 400: it has no one field to be bound to."""
    fields: dict[str, set[str]] = {}
    for configuration in written_configurations(text):
        for holder, key, field in secret_fields(configuration):
            if is_encrypted_value(holder[key]):
                fields.setdefault(holder[key], set()).add(field)
    for path, value in written_secrets(text):
        if is_encrypted_value(value) and value not in fields:
            raise invalid("configuration", f"{path}: no build reads this secure value here; write it where one does.")
    made: dict[str, str] = {}
    for value, where in fields.items():
        if len(where) > 1:
            named = ", ".join(_words(field) for field in sorted(where))
            raise invalid(
                "configuration",
                f"One encrypted value is written for {named}: it is stored as one setting's own token, so encrypt "
                f"the plain value once for each. {HOW_TO_ENCRYPT}",
            )
        (field,) = where
        token = _token(owner, field, value)
        pattern = rf"(?<![{_BASE64}:]){re.escape(value)}(?![{_BASE64}])"  # the whole value, never a part of one
        text, replaced = re.subn(pattern, token.replace("\\", "\\\\"), text)
        if not replaced:  # written over several lines: it cannot be replaced where it stands
            raise invalid("configuration", f"{_words(field)}: write the encrypted value on one line, as it came.")
        made[token] = field
    return text, made


def _token(owner: Owner, field: str, value: str) -> str:
    try:
        return protect(owner, field, value, ())
    except Invalid as error:
        raise invalid("configuration", f"{_words(field)}: {error.message} {HOW_TO_ENCRYPT}") from error


def _words(field: str) -> str:
    """A field as messages name it: ``variable/NAME`` is "variable NAME"."""
    return field.replace("/", " ", 1)
