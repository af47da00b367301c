"""Sections built from a table: one value, a mapping of values, or a script list."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.configuration.yamlconfig.defaults import DEFAULTS
from chalicelib.domain.configuration.yamlconfig.scalars import Plain
from chalicelib.domain.configuration.yamlconfig.syntax import (
    Json,
    Kind,
    Section,
    fail,
    items,
    mapping,
    text,
)

Fields = dict[str, tuple[str, Kind]]

LANGUAGES = ("cmd", "ps", "pwsh", "sh")


def single(key: str, field: str, kind: Kind) -> Section:
    """``key: value`` held in one Configuration field; null leaves the default."""

    def read(value: Any, cfg: Json) -> None:
        if value is not None:
            cfg[field] = kind.read(value, key)

    def write(cfg: Json) -> Any:
        return None if cfg[field] == DEFAULTS[field] else kind.write(cfg[field])

    return Section(read, write)


def read_group(value: Any, path: str, fields: Fields, cfg: Json, expected: str = "a mapping") -> None:
    """Fill cfg from a mapping whose keys are all listed in ``fields``."""
    for name, item in mapping(value, path, expected).items():
        if name not in fields:
            raise fail(f"{path}.{name}", f"unknown setting; expected one of {', '.join(fields)}.")
        field, kind = fields[name]
        if item is not None:
            cfg[field] = kind.read(item, f"{path}.{name}")


def write_group(fields: Fields, cfg: Json) -> Json | None:
    """The mapping of every field in ``fields`` that differs from its default, or None."""
    written = {name: kind.write(cfg[field]) for name, (field, kind) in fields.items() if cfg[field] != DEFAULTS[field]}
    return written or None


def group(key: str, fields: Fields) -> Section:
    """``key: {name: value, ...}``, each name held in its own Configuration field."""

    def read(value: Any, cfg: Json) -> None:
        if value is not None:
            read_group(value, key, fields, cfg)

    return Section(read, lambda cfg: write_group(fields, cfg))


def _script(item: Any, path: str) -> Json:
    """A script line: a plain string is a ``cmd`` line, as AppVeyor's JSON has it (run by Bash on Linux); an explicit
    ``cmd:`` line runs on Windows images only (AppVeyor's rule): the one field beyond AppVeyor's shape says so."""
    if isinstance(item, str):
        return {"language": "cmd", "script": item}
    if isinstance(item, dict) and len(item) == 1:
        ((language, script),) = item.items()
        if language in LANGUAGES and (script is None or isinstance(script, str)):
            if language == "cmd":
                return {"language": "cmd", "script": script or "", "windowsOnly": True}
            return {"language": language, "script": script or ""}
    raise fail(path, "a script is a string or a one-key map of cmd, ps, pwsh or sh.")


def _write_script(script: Json) -> Any:
    if script["language"] == "cmd" and not script.get("windowsOnly"):
        return script["script"]
    return {script["language"]: script["script"]}


SCRIPTS = Kind(
    lambda value, path: [_script(item, where) for item, where in items(value, path)],
    lambda scripts: [_write_script(script) for script in scripts],
)

# Script sections with no build, test or deploy mode attached to them.
SCRIPT_FIELDS = {
    "init": "initScripts",
    "clone_script": "cloneScripts",
    "install": "installScripts",
    "before_build": "beforeBuildScripts",
    "after_build": "afterBuildScripts",
    "before_package": "beforePackageScripts",
    "before_test": "beforeTestScripts",
    "after_test": "afterTestScripts",
    "before_deploy": "beforeDeployScripts",
    "after_deploy": "afterDeployScripts",
    "on_success": "onBuildSuccessScripts",
    "on_failure": "onBuildErrorScripts",
    "on_finish": "onBuildFinishScripts",
}


def mode_scripts(key: str, field: str, mode_field: str) -> Section:
    """build_script, test_script, deploy_script: their mere presence selects the "script" mode."""

    def write(cfg: Json) -> Any:
        return SCRIPTS.write(cfg[field]) if cfg[mode_field] == "script" or cfg[field] else None

    return Section(single(key, field, SCRIPTS).read, write)


def _read_stacks(value: Any, path: str) -> list[Json]:
    names = [name.strip() for item, where in items(value, path) for name in text(item, where).split(",")]
    return [{"value": name} for name in names if name]


# `stack: node 9, mysql` is one comma-separated text; each part is one {value}.
STACKS = Kind(_read_stacks, lambda stacks: Plain(", ".join(entry["value"] for entry in stacks)))


def branches(fields: Fields) -> Section:
    """branches.only / branches.except; branchesMode follows: "include" when there is an only list."""
    inner = group("branches", fields)

    def read(value: Any, cfg: Json) -> None:
        inner.read(value, cfg)
        cfg["branchesMode"] = "include" if cfg["includeBranches"] else "exclude"

    return Section(read, inner.write)


def provider_settings(item: Any, path: str, expected: str) -> tuple[str, dict[str, Any]]:
    """A list item naming its provider: (provider, all its settings)."""
    settings = mapping(item, path, expected)
    if settings.get("provider") is None:
        raise fail(path, "a provider is required.")
    return text(settings["provider"], f"{path}.provider"), settings
