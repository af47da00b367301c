"""Rules on values that several use cases share: e-mail addresses, names, passwords."""

from __future__ import annotations

import re

from chalicelib.errors import Invalid

_EMAIL = re.compile(r"^[^@\s]+@[^@\s.][^@\s]*$")
_ACCOUNT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$")
MIN_PASSWORD_LENGTH = 8


def invalid(field: str, message: str) -> Invalid:
    """A 400 naming the request field at fault, with AppVeyor's ``modelState`` shape."""
    return Invalid(message, {f"request.{field}": [message]})


def valid_email(email: str, field: str = "email") -> str:
    email = email.strip()
    if len(email) > 254 or not _EMAIL.match(email):
        raise invalid(field, f"{field} must be a valid e-mail address.")
    return email


def valid_name(name: str, field: str, max_length: int = 100) -> str:
    name = name.strip()
    if not name:
        raise invalid(field, f"{field} must not be empty.")
    if len(name) > max_length:
        raise invalid(field, f"{field} must be at most {max_length} characters long.")
    if any(not character.isprintable() for character in name):
        raise invalid(field, f"{field} must not contain control characters.")
    return name


def valid_account_name(name: str) -> str:
    if not _ACCOUNT_NAME.match(name):
        raise invalid(
            "name", "An account name is 1 to 50 letters, digits, '.', '_' or '-', and starts with a letter or digit."
        )
    return name


def valid_password(password: str, field: str = "password") -> str:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise invalid(field, f"{field} must be at least {MIN_PASSWORD_LENGTH} characters long.")
    return password
