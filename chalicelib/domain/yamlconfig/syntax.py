"""YAML in and out, and the small readers every section shares.

appveyor.yml is read the way AppVeyor's own parser reads it: a value such as ``3.10``, ``true`` or ``01`` keeps
the text it was written with wherever a string is expected (so ``PYTHON_VERSION: 3.10`` stays "3.10"), and only
settings typed as booleans or integers see its YAML 1.1 meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from chalicelib.domain.validation import MAX_NESTING_DEPTH, nesting_depth
from chalicelib.errors import Invalid

Json = dict[str, Any]
# Levels of lists and mappings in appveyor.yml: its configuration, as JSON in a settings request, stays within
# the levels a request body may have.
MAX_YAML_DEPTH = MAX_NESTING_DEPTH - 8


@dataclass(frozen=True)
class Scalar:
    """A plain YAML scalar that YAML 1.1 types (bool, int, float, timestamp), with the text it was written as."""

    text: str
    value: Any


class Plain(str):
    """Text written unquoted whenever reading it back gives the same text (``true``, ``3.10``, ``on``)."""


class Flow(list[Any]):
    """A list written inline: ``[DAL, BL]``."""


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


class _Loader(yaml.SafeLoader):
    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        return {key.text if isinstance(key, Scalar) else key: value for key, value in mapping.items()}


def _keeping_text(construct: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def construct_scalar(loader: Any, node: Any) -> Any:
        try:
            return Scalar(node.value, construct(loader, node))
        except ValueError:  # a timestamp-like text that is no date: AppVeyor would see a string too
            return node.value

    return construct_scalar


_TYPED_TAGS = {"bool", "int", "float", "timestamp"}
for _tag in _TYPED_TAGS:
    _name = f"tag:yaml.org,2002:{_tag}"
    _Loader.add_constructor(_name, _keeping_text(yaml.SafeLoader.yaml_constructors[_name]))
# A lone "=" resolves to YAML 1.1's "value" tag, which no safe constructor knows; it is text like any other.
_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: node.value)


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)  # lists indented under their key, as AppVeyor's docs write them

    def ignore_aliases(self, data: Any) -> bool:
        return True


_UNICODE_BREAKS = set("\x85\u2028\u2029")  # a line break to YAML: only escaped (double quotes) do they survive


def _literal(text: str) -> bool:
    # Several trailing line breaks would need "keep" chomping (|+), which ends the YAML document early.
    return "\n" in text and text.strip("\n") != "" and not text.endswith("\n\n")


def _represent_str(dumper: Any, text: str) -> Any:
    style = '"' if _UNICODE_BREAKS & set(text) else "|" if _literal(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(text), style=style)


def _represent_plain(dumper: Any, text: Plain) -> Any:
    tag = dumper.resolve(yaml.ScalarNode, str(text), (True, False))
    if "\n" not in text and tag.rsplit(":", 1)[-1] in _TYPED_TAGS:
        return dumper.represent_scalar(tag, str(text))
    return _represent_str(dumper, text)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(Plain, _represent_plain)
_Dumper.add_representer(
    Flow, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)
)
_Dumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", ""))


def load(text: str) -> Any:
    """The YAML document in ``text``; Invalid naming the line when it is not YAML."""
    try:
        document = yaml.load(text, Loader=_Loader)
        too_deep = nesting_depth(document, MAX_YAML_DEPTH) > MAX_YAML_DEPTH
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise Invalid(f"appveyor.yml is not valid YAML: {problem}{where}.") from error
    except RecursionError:  # deeper than the parser goes, so deeper than the limit too
        too_deep = True
    if too_deep:
        raise Invalid(f"appveyor.yml is nested too deeply: at most {MAX_YAML_DEPTH} levels are accepted.")
    return document


def dump(key: str, value: Any) -> str:
    """One top-level ``key: value`` in readable block style."""
    return yaml.dump(
        {key: value}, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1_000_000
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


def choice(*allowed: str) -> Kind:
    """Text that must be one of ``allowed``."""

    def read(value: Any, path: str) -> str:
        chosen = text(value, path)
        if chosen not in allowed:
            raise fail(path, f"expected one of {', '.join(allowed)}.")
        return chosen

    return Kind(read, Plain)
