"""Reading typed fields out of a JSON request body, with 400s that name the field."""

from __future__ import annotations

import re
from typing import Any

from chalicelib.domain.validation import invalid
from chalicelib.errors import Invalid, NotFound

_INTEGER = re.compile(r"-?[0-9]{1,16}")  # ASCII digits only: str.isdigit() also takes "²"
_PATH_ID = re.compile(r"[0-9]{1,15}")


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

    def text(self, name: str) -> str:
        return self._as_text(name, self._required(name))

    def optional_text(self, name: str) -> str | None:
        value = self.body.get(name)
        return None if value is None else self._as_text(name, value)

    def integer(self, name: str) -> int:
        """An integer, also accepted as a string of digits (AppVeyor's clients send both)."""
        value = self._required(name)
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(name, f"{name} must be an integer.")
        if not -(2**53) < value < 2**53:
            raise invalid(name, f"{name} is out of range.")
        return value

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
    def _as_text(name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise invalid(name, f"{name} must be a string.")
        return value


def path_id(value: str, what: str) -> int:
    """An integer id from a URL; an id that is not a number names nothing, so 404."""
    if not _PATH_ID.fullmatch(value):
        raise NotFound(f"{what} not found.")
    return int(value)


def query_integer(query: dict[str, str], name: str, required: bool = False) -> int | None:
    """An integer query parameter; a 400 naming it when it is not one (or is missing and ``required``)."""
    value = query.get(name)
    if value is None or value == "":
        if required:
            raise invalid(name, f"{name} is required.")
        return None
    return Fields({name: value}).integer(name)
