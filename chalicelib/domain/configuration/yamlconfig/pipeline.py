"""The phases with a mode (build, test, deploy), and artifacts."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.configuration.user_regex import check_pattern
from chalicelib.domain.configuration.yamlconfig.scalars import Flow, Plain, Scalar
from chalicelib.domain.configuration.yamlconfig.sections import (
    Fields,
    provider_settings,
    read_group,
    single,
    write_group,
)
from chalicelib.domain.configuration.yamlconfig.syntax import (
    FLAG,
    PATTERNS,
    TEXT,
    VALUES,
    Json,
    Kind,
    Section,
    choice,
    fail,
    is_off,
    items,
    mapping,
    text,
)
from chalicelib.domain.configuration.yamlconfig.variables import named_value, write_variables

_BUILD_FIELDS: Fields = {
    "project": ("msBuildProjectFileName", TEXT),
    "parallel": ("msBuildInParallel", FLAG),
    "verbosity": ("msBuildVerbosity", choice("quiet", "minimal", "normal", "detailed")),
    "publish_wap": ("packageWebApplicationProjects", FLAG),
    "publish_wap_xcopy": ("packageWebApplicationProjectsXCopy", FLAG),
    "publish_wap_beanstalk": ("packageWebApplicationProjectsBeanstalk", FLAG),
    "publish_wap_octopus": ("packageWebApplicationProjectsOctopus", FLAG),
    "publish_azure_webjob": ("packageAzureWebJobProjects", FLAG),
    "publish_azure": ("packageAzureCloudServiceProjects", FLAG),
    "publish_aspnet_core": ("packageAspNetCoreProjects", FLAG),
    "publish_core_console": ("packageDotnetConsoleProjects", FLAG),
    "publish_nuget": ("packageNuGetProjects", FLAG),
    "publish_nuget_symbols": ("packageNuGetSymbols", FLAG),
    "include_nuget_references": ("includeNuGetReferences", FLAG),
}
# build:'s packaging options (appveyor.yml's name -> the configuration's field), which MSBuild mode does on AppVeyor
PACKAGING_FIELDS = {
    name: field for name, (field, _) in _BUILD_FIELDS.items() if field.startswith(("package", "include"))
}

_PHASES = (
    ("build", "build_script", "buildMode", "msbuild"),
    ("test", "test_script", "testMode", "auto"),
    ("deploy", "deploy_script", "deployMode", "providers"),
)


# AppVeyor's build modes written as a word (its settings' Build tab: MSBuild, Script, Off), any case.
_BUILD_MODES = {"off": "none", "script": "script", "msbuild": "msbuild"}


def _build_mode(value: Any) -> str | None:
    """The mode ``build: <word>`` names (None: the mapping form, or no build: at all)."""
    written = value.text if isinstance(value, Scalar) else value if isinstance(value, str) else None
    return None if written is None else _BUILD_MODES.get(written.strip().lower())


def read_modes(document: Json, cfg: Json) -> None:
    """``off`` switches a phase off; otherwise its script key, even empty, selects the "script" mode, as does
    ``build: Script``; ``build: MSBuild`` is the mapping form's MSBuild mode, its default."""
    for phase, script_key, mode_field, default in _PHASES:
        cfg[mode_field] = "none" if is_off(document.get(phase)) else "script" if script_key in document else default
    if _build_mode(document.get("build")) == "script":
        cfg["buildMode"] = "script"


def modes_written(document: Json) -> Json:
    """The modes of the phases ``document`` names (its phase or script key): what a ``for:`` item changes."""
    modes: Json = {}
    read_modes(document, modes)
    return {mode: modes[mode] for phase, script_key, mode, _ in _PHASES if phase in document or script_key in document}


def _read_build(value: Any, cfg: Json) -> None:
    if value is not None and not is_off(value) and _build_mode(value) is None:
        read_group(value, "build", _BUILD_FIELDS, cfg, "off, Script, MSBuild or a mapping")


def _write_build(cfg: Json) -> Any:
    return Plain("off") if cfg["buildMode"] == "none" else write_group(_BUILD_FIELDS, cfg)


BUILD = Section(_read_build, _write_build)


def _read_selection(value: Any, path: str, groups_allowed: bool) -> tuple[list[Json], str, list[Json]]:
    """test.assemblies or test.categories as (values, mode, parallel category groups)."""
    if value is None:
        return [], "include", []
    if isinstance(value, dict):
        selection = mapping(value, path)
        if len(selection) > 1 or not set(selection) <= {"only", "except"}:
            raise fail(path, "expected only: [...] or except: [...], not both.")
        if not selection:
            return [], "include", []
        ((name, listed),) = selection.items()
        selected = [] if listed is None else VALUES.read(listed, f"{path}.{name}")
        return selected, "exclude" if name == "except" and selected else "include", []
    singles: list[Json] = []
    groups: list[Json] = []
    for item, where in items(value, path):
        if groups_allowed and isinstance(item, list):
            groups.append({"categories": VALUES.read(item, where)})
        else:
            singles.append({"value": text(item, where)})
    return singles, "include", groups


def _read_test(value: Any, cfg: Json) -> None:
    if value is None or is_off(value):
        return
    for name, item in mapping(value, "test", "off or a mapping").items():
        path = f"test.{name}"
        if name == "assemblies":
            cfg["testAssemblies"], cfg["testAssembliesMode"], _ = _read_selection(item, path, False)
        elif name == "categories":
            cfg["testCategories"], cfg["testCategoriesMode"], cfg["testCategoriesMatrix"] = _read_selection(
                item, path, True
            )
        else:
            raise fail(path, "unknown setting; expected one of assemblies, categories.")


def _write_selection(values: list[Json], mode: str, groups: list[Json]) -> Any:
    if groups:  # the list form: single categories, then the parallel groups
        return VALUES.write(values) + [Flow(VALUES.write(group["categories"])) for group in groups]
    return {"except" if mode == "exclude" else "only": VALUES.write(values)} if values else None


def _write_test(cfg: Json) -> Any:
    if cfg["testMode"] == "none":
        return Plain("off")
    selections = {
        "assemblies": _write_selection(cfg["testAssemblies"], cfg["testAssembliesMode"], []),
        "categories": _write_selection(cfg["testCategories"], cfg["testCategoriesMode"], cfg["testCategoriesMatrix"]),
    }
    return {name: selection for name, selection in selections.items() if selection is not None} or None


TEST = Section(_read_test, _write_test)

_ARTIFACT_KEYS = ("path", "name", "type")


def _read_artifact(item: Any, path: str) -> Json:
    if isinstance(item, str | Scalar):
        return {"path": text(item, path)}
    artifact = mapping(item, path, "a path or a mapping of path, name and type")
    for key in artifact:
        if key not in _ARTIFACT_KEYS:
            raise fail(f"{path}.{key}", "unknown setting; expected one of path, name, type.")
    if artifact.get("path") is None:
        raise fail(path, "an artifact needs a path.")
    return {key: text(artifact[key], f"{path}.{key}") for key in _ARTIFACT_KEYS if artifact.get(key) is not None}


ARTIFACTS = single(
    "artifacts",
    "artifacts",
    Kind(
        lambda value, path: [_read_artifact(item, where) for item, where in items(value, path)],
        lambda artifacts: [
            {key: Plain(artifact[key]) for key in _ARTIFACT_KEYS if artifact.get(key) is not None}
            for artifact in artifacts
        ],
    ),
)


def _read_deployment(item: Any, path: str) -> Json:
    provider, settings = provider_settings(item, path, "off or a list of mappings with a provider")
    deployment: Json = {"provider": provider, "providerSettings": [], "onBranch": [], "onEnvironmentVariables": []}
    for name, value in settings.items():
        if name not in ("provider", "on"):
            deployment["providerSettings"].append(named_value(name, value, f"{path}.{name}"))
    conditions = settings.get("on")
    for name, value in ({} if conditions is None else mapping(conditions, f"{path}.on")).items():
        if name == "branch":
            deployment["onBranch"] = [] if value is None else PATTERNS.read(value, f"{path}.on.branch")
        else:
            condition = named_value(name, value, f"{path}.on.{name}")
            if not condition["value"]["isEncrypted"]:
                check_pattern(condition["value"].get("value", ""), f"{path}.on.{name}")
            deployment["onEnvironmentVariables"].append(condition)
    return deployment


def _write_deployment(deployment: Json) -> Json:
    conditions: Json = {}
    branches = VALUES.write(deployment.get("onBranch", []))
    if branches:
        conditions["branch"] = branches[0] if len(branches) == 1 else branches
    conditions.update(write_variables(deployment.get("onEnvironmentVariables", [])))
    written: Json = {"provider": Plain(deployment["provider"])}
    written.update(write_variables(deployment.get("providerSettings", [])))
    if conditions:
        written[Plain("on")] = conditions
    return written


def _read_deploy(value: Any, cfg: Json) -> None:
    if value is not None and not is_off(value):
        cfg["deployments"] = [_read_deployment(item, where) for item, where in items(value, "deploy")]


def _write_deploy(cfg: Json) -> Any:
    if cfg["deployMode"] == "none":
        return Plain("off")
    return [_write_deployment(deployment) for deployment in cfg["deployments"]] or None


DEPLOY = Section(_read_deploy, _write_deploy)
