"""appveyor.yml's ``stack:`` and ``services:`` entries as both sides read them: the service when the build is queued
(domain/configuration/stacks.py refuses what the image cannot give) and the runner before init (runner/stacks.py),
so a job never starts a service nobody checked. Pure: no IO, imported by the control plane."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

LANGUAGES = {"node": "node", "nodejs": "node", "go": "go", "jdk": "jdk", "java": "jdk", "ruby": "ruby"}
LANGUAGES["python"] = "python"
# AppVeyor's service names on Linux; Windows images' versioned names (postgresql96, mysql57, mssql2017) name the same
_SERVICE = re.compile(r"^(postgresql|pgsql|mysql|redis|rabbitmq|mongodb|mssql|docker)(\d*)$")


@dataclass(frozen=True)
class Stack:
    """What a job's configuration asks for: languages as (name, version) in order, services by AppVeyor's name,
    entries that are neither, and services asked for with a version (``postgresql96``, ``mysql 5.7``): the image
    has one release of each, and the job's log says which stands for them."""

    languages: tuple[tuple[str, str], ...] = ()
    services: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    versioned: tuple[str, ...] = ()


def read(stacks: Iterable[dict[str, Any]], services: Iterable[dict[str, Any]]) -> Stack:
    """The stack of a configuration's ``stacks`` (``node 18``, ``mysql``) and ``services`` entries."""
    languages: list[tuple[str, str]] = []
    started: list[str] = []
    unknown: list[str] = []
    versioned: list[str] = []
    for entry in [*stacks, *services]:
        words = str(entry.get("value") or "").split()
        if not words:
            continue
        name = words[0].casefold()
        service = _SERVICE.match(name)
        if name in LANGUAGES and len(words) == 2:
            languages.append((LANGUAGES[name], words[1]))
        elif service and len(words) <= 2:
            named = "postgresql" if service.group(1) == "pgsql" else service.group(1)
            if named not in started:
                started.append(named)
            if service.group(2) or len(words) == 2:
                versioned.append(" ".join(words))
        else:
            unknown.append(" ".join(words))
    return Stack(tuple(languages), tuple(started), tuple(unknown), tuple(versioned))
