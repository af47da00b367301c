"""Reading typed fields out of a JSON request body, with 400s that name the field and, for a limit, the limit."""

from __future__ import annotations

import json
import re
from typing import Any

from chalicelib.domain.shared.validation import MAX_INTEGER, MAX_TEXT_LENGTH, invalid, out_of_range, too_long
from chalicelib.errors import Invalid, NotFound

_INTEGER = re.compile(r"-?[0-9]{1,40}")  # ASCII digits only: str.isdigit() also takes "²"
_PATH_ID = re.compile(r"[0-9]{1,15}")
MAX_VARIABLES = 100  # a start request's environmentVariables ...
MAX_VARIABLES_BYTES = 65_536  # ... and their size as JSON: they are stored with the build or deployment


class Fields:
    """The fields of one JSON object; each accessor raises a 400 naming the field it could not read."""

    def __init__(self, body: Any, what: str = "The request body") -> None:
        if not isinstance(body, dict):
            raise Invalid(f"{what} must be a JSON object.")
        self.body = body

    def _required(self, name: str) -> Any:
        value = self.body.get(name)
        if value is None:
            raise invalid(name, f"{name} is required.")
        return value

    def text(self, name: str, max_length: int = MAX_TEXT_LENGTH) -> str:
        """A string of at most ``max_length`` characters."""
        return self._as_text(name, self._required(name), max_length)

    def optional_text(self, name: str, max_length: int = MAX_TEXT_LENGTH) -> str | None:
        value = self.body.get(name)
        return None if value is None else self._as_text(name, value, max_length)

    def integer(self, name: str, minimum: int = -MAX_INTEGER, maximum: int = MAX_INTEGER) -> int:
        """An integer from ``minimum`` to ``maximum``, also accepted as a string of digits (AppVeyor's clients
        send both)."""
        value = self._required(name)
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(name, f"{name} must be an integer.")
        if not minimum <= value <= maximum:
            raise out_of_range(name, minimum, maximum)
        return value

    def identifier(self, name: str) -> int:
        """An id: an integer from 1 up."""
        return self.integer(name, minimum=1)

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.body.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise invalid(name, f"{name} must be true or false.")
        return value

    def array(self, name: str) -> list[Any]:
        value = self._required(name)
        if not isinstance(value, list):
            raise invalid(name, f"{name} must be an array.")
        return value

    @staticmethod
    def _as_text(name: str, value: Any, max_length: int) -> str:
        if not isinstance(value, str):
            raise invalid(name, f"{name} must be a string.")
        if len(value) > max_length:
            raise too_long(name, max_length)
        try:  # JSON's \\ud800 (a lone surrogate): no table or bucket stores it, so it would be a 500 where it lands
            value.encode()
        except UnicodeEncodeError as error:
            raise invalid(name, f"{name} is not valid Unicode text (it holds a lone surrogate).") from error
        return value


def bounded_variables(name: str, variables: dict[str, str]) -> dict[str, str]:
    """A start request's variables, within their limits: how many, how long a name, how big in all."""
    if len(variables) > MAX_VARIABLES:
        raise invalid(name, f"{name} may hold at most {MAX_VARIABLES} variables.")
    for variable, value in variables.items():
        if len(variable) > MAX_TEXT_LENGTH:
            raise invalid(name, f"{name}: a variable name must be at most {MAX_TEXT_LENGTH} characters long.")
        # No process environment can hold these: the build's runner could only fail on them
        if "=" in variable or "\0" in variable or "\0" in value:
            raise invalid(name, f"{name}: a variable's name may not hold '=' or a NUL character, nor its value a NUL.")
    if len(json.dumps(variables)) > MAX_VARIABLES_BYTES:
        raise invalid(name, f"{name} must be at most {MAX_VARIABLES_BYTES} bytes long as JSON.")
    return variables


def path_id(value: str, what: str) -> int:
    """An integer id from a URL; an id that is not a number names nothing, so 404."""
    if not _PATH_ID.fullmatch(value):
        raise NotFound(f"{what} not found.")
    return int(value)


def query_integer(
    query: dict[str, str], name: str, required: bool = False, minimum: int = -MAX_INTEGER, maximum: int = MAX_INTEGER
) -> int | None:
    """An integer query parameter from ``minimum`` to ``maximum``; a 400 naming it when it is not one (or is
    missing and ``required``)."""
    value = query.get(name)
    if value is None or value == "":
        if required:
            raise invalid(name, f"{name} is required.")
        return None
    return Fields({name: value}).integer(name, minimum, maximum)
