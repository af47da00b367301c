"""Rules on values that several use cases share: e-mail addresses, names, passwords; and the input limits
(docs/api.md, "Limits") that keep every request within what Lambda, KMS and a DynamoDB item can take."""

from __future__ import annotations

import re
from typing import Any

from chalicelib.errors import Invalid

_EMAIL = re.compile(r"^[^@\s]+@[^@\s.][^@\s]*$")
_ACCOUNT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$")
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256
MAX_EMAIL_LENGTH = 254  # RFC 5321's longest path
MAX_NAME_LENGTH = 100  # names people give: users, projects, environments
MAX_TEXT_LENGTH = 256  # any other string: slugs, branches, versions, ids; 256 characters fit a DynamoDB key
MAX_INTEGER = 2**53 - 1  # the largest integer every JSON client reads exactly; ids never come near it
MAX_NESTING_DEPTH = 32  # levels of arrays and objects in a JSON body


def invalid(field: str, message: str) -> Invalid:
    """A 400 naming the request field at fault, with AppVeyor's ``modelState`` shape."""
    return Invalid(message, {f"request.{field}": [message]})


def too_long(field: str, max_length: int) -> Invalid:
    """The 400 for a string longer than its limit."""
    return invalid(field, f"{field} must be at most {max_length} characters long.")


def out_of_range(field: str, minimum: int, maximum: int) -> Invalid:
    """The 400 for a number outside its range."""
    return invalid(field, f"{field} must be between {minimum} and {maximum}.")


def valid_email(email: str, field: str = "email") -> str:
    email = email.strip()
    if len(email) > MAX_EMAIL_LENGTH:
        raise too_long(field, MAX_EMAIL_LENGTH)
    if not _EMAIL.match(email):
        raise invalid(field, f"{field} must be a valid e-mail address.")
    return email


def valid_name(name: str, field: str, max_length: int = MAX_NAME_LENGTH) -> str:
    name = name.strip()
    if not name:
        raise invalid(field, f"{field} must not be empty.")
    if len(name) > max_length:
        raise too_long(field, max_length)
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
    if len(password) > MAX_PASSWORD_LENGTH:
        raise too_long(field, MAX_PASSWORD_LENGTH)
    return password


def nesting_depth(document: Any, limit: int) -> int:
    """How many levels of lists and dicts ``document`` has, counting no further than ``limit + 1``.

    Iterative, so no depth exhausts the stack; each container is looked at once, so YAML aliases that
    share one container many times cost nothing more.
    """
    deepest = 0
    seen: set[int] = set()
    waiting: list[tuple[Any, int]] = [(document, 1)]
    while waiting:
        value, level = waiting.pop()
        if not isinstance(value, dict | list) or id(value) in seen:
            continue
        seen.add(id(value))
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        children = value.values() if isinstance(value, dict) else value
        waiting.extend((child, level + 1) for child in children)
    return deepest
