"""The values appveyor.yml is read into where YAML alone would lose how they were written: shared by the readers
(syntax.py) and PyYAML's loader and dumper (yamlio.py), which load only when YAML is read or written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Scalar:
    """A plain YAML scalar that YAML 1.1 types (bool, int, float, timestamp), with the text it was written as."""

    text: str
    value: Any


class Plain(str):
    """Text written unquoted whenever reading it back gives the same text (``true``, ``3.10``, ``on``)."""


class Flow(list[Any]):
    """A list written inline: ``[DAL, BL]``."""
