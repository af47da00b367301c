"""appveyor.yml's ``build:`` packaging options (``publish_wap``, ``publish_nuget`` ...), which AppVeyor's MSBuild mode
does after its build and no runner here does: a Windows build agent runs MSBuild to build (runner/windows/msbuild.py)
and packages nothing, and its job's log names each option set; a Linux runner runs no MSBuild at all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.core.os_types import is_windows
from chalicelib.domain.configuration.yamlconfig.pipeline import PACKAGING_FIELDS

NOT_PACKAGED = (
    "MSBuild builds the project on a Windows build agent, and packages nothing: make the package in after_build "
    "(msbuild /t:Package, nuget pack, dotnet pack or dotnet publish)"
)


def packaging_set(configuration: Mapping[str, Any]) -> list[str]:
    """The packaging options of ``build:`` a configuration in MSBuild mode sets, by their appveyor.yml names."""
    if configuration.get("buildMode") != "msbuild":
        return []  # build_script or build: off: AppVeyor packages nothing either
    return [name for name, field in PACKAGING_FIELDS.items() if configuration.get(field) is True]


def not_done(configuration: Mapping[str, Any]) -> str | None:
    """What a Windows job's build says of the packaging options its configuration sets (None: it sets none)."""
    names = packaging_set(configuration)
    if not names:
        return None
    return f"appveyor.yml build: {', '.join(names)} {'is' if len(names) == 1 else 'are'} not done: {NOT_PACKAGED}."


def runs_on_windows(spec: Mapping[str, Any]) -> bool:
    """Whether a job's image is one of AppVeyor's Windows images: its runner is a Windows build agent's (or
    ``conveyor exec``'s, under Wine), which runs MSBuild."""
    return is_windows(spec.get("image"))


def log_notes(configuration: Mapping[str, Any], spec: Mapping[str, Any]) -> list[str]:
    """What a Windows job's log says of the packaging options its configuration sets: one line each."""
    if not runs_on_windows(spec):
        return []  # a Linux runner says it skips MSBuild itself
    return [f"appveyor.yml build: {name} is not done: {NOT_PACKAGED}." for name in packaging_set(configuration)]
