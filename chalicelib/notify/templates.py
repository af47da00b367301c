"""Notification templates: the part of Mustache AppVeyor's subject, message and chat templates use, rendered over
a build's event data (pure)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_SECTION = re.compile(r"\{\{([#^])\s*(\w+)\s*\}\}(.*?)\{\{/\s*\2\s*\}\}", re.DOTALL)
_VARIABLE = re.compile(r"\{\{\{?\s*&?\s*(\w+)\s*\}?\}\}")


def render(template: str, values: Mapping[str, Any], escape: Callable[[str], str] | None = None) -> str:
    """A template's ``{{name}}`` replaced by ``values`` and ``{{#name}}...{{/name}}`` kept only when truthy
    (``{{^name}}`` when falsy): the part of Mustache AppVeyor's subject and message templates use. With
    ``escape``, each ``{{name}}`` value passes through it, and ``{{{name}}}`` or ``{{&name}}`` stays as it is
    (Mustache's escaped and raw forms: Slack's text must escape ``&``, ``<`` and ``>``)."""

    def section(match: re.Match[str]) -> str:
        shown = bool(values.get(match.group(2)))
        return match.group(3) if shown == (match.group(1) == "#") else ""

    def variable(match: re.Match[str]) -> str:
        value = _text(values.get(match.group(1)))
        raw = match.group(0).startswith("{{{") or match.group(0)[2:].lstrip().startswith("&")
        return value if escape is None or raw else escape(value)

    previous = None
    while previous != template:  # a pass resolves the outermost sections; nested ones, the next passes
        previous, template = template, _SECTION.sub(section, template)
    return _VARIABLE.sub(variable, template)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
