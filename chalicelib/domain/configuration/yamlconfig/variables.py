"""Named values: environment variables, matrix rows and conditions, hosts, secure values."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.configuration.yamlconfig.scalars import Plain
from chalicelib.domain.configuration.yamlconfig.sections import group
from chalicelib.domain.configuration.yamlconfig.syntax import (
    FLAG,
    Json,
    Kind,
    Section,
    fail,
    items,
    mapping,
    text,
)

_SECURE_SHAPE = "expected a value or {secure: <encrypted text>}."


def read_stored_value(value: Any, path: str) -> Json:
    """A scalar, null or ``{secure: ...}`` as ``{isEncrypted, value}``; an empty value has no ``value`` key."""
    if isinstance(value, dict):
        if set(mapping(value, path)) != {"secure"}:
            raise fail(path, _SECURE_SHAPE)
        return {"isEncrypted": True, "value": text(value["secure"], f"{path}.secure")}
    if isinstance(value, list):
        raise fail(path, _SECURE_SHAPE)
    written = None if value is None else text(value, path)
    return {"isEncrypted": False, "value": written} if written else {"isEncrypted": False}


def write_stored_value(stored: Json) -> Any:
    """The YAML form of ``{isEncrypted, value}``."""
    if stored.get("value") is None:
        return None
    if stored.get("isEncrypted"):
        return {"secure": stored["value"]}
    return Plain(stored["value"])


def named_value(name: str, value: Any, path: str) -> Json:
    """``{name, value: {isEncrypted, value}}``."""
    return {"name": name, "value": read_stored_value(value, path)}


def read_variables(value: Any, path: str, expected: str = "a mapping of names to values") -> list[Json]:
    """A mapping name -> value as a list of named values, in file order."""
    return [named_value(name, item, f"{path}.{name}") for name, item in mapping(value, path, expected).items()]


def write_variables(variables: list[Json]) -> dict[str, Any]:
    """Named values as a mapping name -> value."""
    return {Plain(variable["name"]): write_stored_value(variable["value"]) for variable in variables}


SECURE_TEXT = Kind(read_stored_value, write_stored_value)

# Matrix rows (environment.matrix) and matrix conditions (allow_failures, exclude, only, except) alike:
# each row is {"variables": [named values]}, where image, platform or configuration are names like any other.
ROWS = Kind(
    lambda value, path: [{"variables": read_variables(row, where)} for row, where in items(value, path)],
    lambda rows: [write_variables(row["variables"]) for row in rows],
)

HOSTS = Kind(
    lambda value, path: [
        {"host": host, "ip": text(ip, f"{path}.{host}")}
        for host, ip in mapping(value, path, "a mapping of host names to addresses").items()
    ],
    lambda entries: {Plain(entry["host"]): Plain(entry["ip"]) for entry in entries},
)

MATRIX = group(
    "matrix",
    {
        "fast_finish": ("matrixFastFinish", FLAG),
        "allow_failures": ("matrixAllowFailures", ROWS),
        "exclude": ("matrixExclude", ROWS),
        "only": ("matrixOnly", ROWS),
        "except": ("matrixExcept", ROWS),
    },
)


def _read_environment(value: Any, cfg: Json) -> None:
    if value is None:
        return
    variables: list[Json] = []
    rows: list[Json] = []
    for name, item in mapping(value, "environment", "a mapping of variable names to values").items():
        if name == "global":
            variables += [] if item is None else read_variables(item, "environment.global")
        elif name == "matrix":
            rows = [] if item is None else ROWS.read(item, "environment.matrix")
        else:
            variables.append(named_value(name, item, f"environment.{name}"))
    seen: set[str] = set()
    for variable in variables:
        if variable["name"] in seen:
            raise fail(f"environment.{variable['name']}", "the variable is defined twice.")
        seen.add(variable["name"])
    cfg["environmentVariables"] = variables
    cfg["environmentVariablesMatrix"] = rows


def _write_environment(cfg: Json) -> Any:
    variables = write_variables(cfg["environmentVariables"])
    rows = ROWS.write(cfg["environmentVariablesMatrix"])
    if not rows and not set(variables) & {"global", "matrix"}:
        return variables or None
    written: Json = {}
    if variables:
        written["global"] = variables
    if rows:
        written["matrix"] = rows
    return written


ENVIRONMENT = Section(_read_environment, _write_environment)
