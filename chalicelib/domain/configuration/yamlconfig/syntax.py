"""YAML in and out, and the small readers every section shares.

appveyor.yml is read the way AppVeyor's own parser reads it: a value such as ``3.10``, ``true`` or ``01`` keeps
the text it was written with wherever a string is expected (so ``PYTHON_VERSION: 3.10`` stays "3.10"), and only
settings typed as booleans or integers see its YAML 1.1 meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalicelib.domain.configuration.user_regex import check_pattern
from chalicelib.domain.configuration.yamlconfig.scalars import Plain, Scalar
from chalicelib.domain.shared.validation import MAX_NESTING_DEPTH, nesting_depth
from chalicelib.errors import Invalid

Json = dict[str, Any]
# Levels of lists and mappings in appveyor.yml: its configuration, as JSON in a settings request, stays within
# the levels a request body may have.
MAX_YAML_DEPTH = MAX_NESTING_DEPTH - 8
# Values once aliases (*name) and merge keys (<<) are expanded, which a few lines can multiply without end: about
# one per byte, so a file of a stored configuration's size without aliases stays within it.
MAX_YAML_VALUES = 250_000


@dataclass(frozen=True)
class Kind:
    """How one setting's value is read from YAML (``read(value, path)``) and written back (``write(json)``)."""

    read: Callable[[Any, str], Any]
    write: Callable[[Any], Any]


@dataclass(frozen=True)
class Section:
    """One top-level appveyor.yml key: ``read(value, cfg)`` fills cfg, ``write(cfg)`` gives the value or None."""

    read: Callable[[Any, Json], None]
    write: Callable[[Json], Any]


def load(text: str) -> Any:
    """The YAML document in ``text``; Invalid naming the line when it is not YAML."""
    import yaml  # PyYAML loads only where YAML is read or written: cold start

    from chalicelib.domain.configuration.yamlconfig.yamlio import load_within

    too_many = False
    try:
        document, too_many = load_within(text, MAX_YAML_VALUES)
        too_deep = nesting_depth(document, MAX_YAML_DEPTH) > MAX_YAML_DEPTH
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise Invalid(f"appveyor.yml is not valid YAML: {problem}{where}.") from error
    except RecursionError:  # deeper than the parser goes, so deeper than the limit too
        too_deep = True
    if too_many:
        raise Invalid(
            f"appveyor.yml holds more than {MAX_YAML_VALUES} values once its aliases (*name) and merge keys (<<) "
            f"are expanded; at most {MAX_YAML_VALUES} are accepted."
        )
    if too_deep:
        raise Invalid(f"appveyor.yml is nested too deeply: at most {MAX_YAML_DEPTH} levels are accepted.")
    return document


def dump(key: str, value: Any) -> str:
    """One top-level ``key: value`` in readable block style."""
    import yaml  # PyYAML loads only where YAML is read or written: cold start

    from chalicelib.domain.configuration.yamlconfig.yamlio import Dumper

    return yaml.dump(
        {key: value}, Dumper=Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1_000_000
    )


def fail(path: str, message: str) -> Invalid:
    """Invalid naming the key path at fault."""
    return Invalid(f"{path}: {message}")


def text(value: Any, path: str) -> str:
    """A scalar as the text it was written with."""
    if isinstance(value, Scalar):
        return value.text
    if isinstance(value, str):
        return value
    raise fail(path, "expected a text value.")


def boolean(value: Any, path: str) -> bool:
    """A YAML boolean (true/false, yes/no, on/off)."""
    if isinstance(value, Scalar) and isinstance(value.value, bool):
        return value.value
    raise fail(path, "expected true or false.")


def positive_integer(value: Any, path: str) -> int:
    """A whole number of at least 1."""
    if isinstance(value, Scalar) and type(value.value) is int and value.value >= 1:
        return int(value.value)
    raise fail(path, "expected a whole number of at least 1.")


def mapping(value: Any, path: str, expected: str = "a mapping") -> dict[str, Any]:
    """A YAML mapping whose keys are all text."""
    if not isinstance(value, dict):
        raise fail(path, f"expected {expected}.")
    for key in value:
        if not isinstance(key, str):
            raise fail(path, f"the key {key!r} is not a name.")
    return value


def items(value: Any, path: str) -> list[tuple[Any, str]]:
    """A list's items with their paths; one value alone stands for a list of one, null for an empty list."""
    if value is None:
        return []
    if isinstance(value, list):
        return [(item, f"{path}[{index}]") for index, item in enumerate(value)]
    return [(value, path)]


def is_off(value: Any) -> bool:
    """``off`` (which YAML 1.1 reads as false) switches a build, test or deploy phase off."""
    return (isinstance(value, Scalar) and value.value is False) or value == "off"


def _same(value: Any) -> Any:
    return value


FLAG = Kind(boolean, _same)
COUNT = Kind(positive_integer, _same)
TEXT = Kind(text, lambda value: None if value is None else Plain(value))
VALUES = Kind(
    lambda value, path: [{"value": text(item, where)} for item, where in items(value, path)],
    lambda values: [Plain(entry["value"]) for entry in values],
)
# Filter values that may be written /regex/ (branches, commit filters, deploy conditions): checked here, so a
# pattern RE2 cannot run is refused when the settings are saved, and fails a build whose appveyor.yml holds it.
PATTERN = Kind(lambda value, path: check_pattern(text(value, path), path), TEXT.write)
PATTERNS = Kind(
    lambda value, path: [{"value": check_pattern(text(item, where), where)} for item, where in items(value, path)],
    VALUES.write,
)


def choice(*allowed: str) -> Kind:
    """Text that must be one of ``allowed``."""

    def read(value: Any, path: str) -> str:
        chosen = text(value, path)
        if chosen not in allowed:
            raise fail(path, f"expected one of {', '.join(allowed)}.")
        return chosen

    return Kind(read, Plain)
