"""appveyor.yml <-> a project's Configuration (the API's ``settings.configuration``), both ways.

``from_yaml`` gives a canonical Configuration: every field of ``default_configuration()`` present, absent
optional scalars null, empty variables without a ``value`` key. ``to_yaml`` writes only what differs from the
defaults, in the order of AppVeyor's appveyor.yml reference. Field names the spec does not show are listed in
``defaults.py``; notification settings keep their appveyor.yml names and forms (``{"secure": ...}`` included).
"""

from __future__ import annotations

import copy
from typing import Any

from chalicelib.domain.yamlconfig.defaults import DEFAULT_VERSION_FORMAT, DEFAULTS, default_configuration
from chalicelib.domain.yamlconfig.notifications import NOTIFICATIONS
from chalicelib.domain.yamlconfig.pipeline import ARTIFACTS, BUILD, DEPLOY, TEST, read_modes
from chalicelib.domain.yamlconfig.scalars import Plain
from chalicelib.domain.yamlconfig.sections import SCRIPT_FIELDS, SCRIPTS, STACKS, branches, group, mode_scripts, single
from chalicelib.domain.yamlconfig.syntax import (
    COUNT,
    FLAG,
    PATTERN,
    PATTERNS,
    TEXT,
    VALUES,
    Json,
    Section,
    dump,
    fail,
    load,
    mapping,
)
from chalicelib.domain.yamlconfig.syntax import text as text_value
from chalicelib.domain.yamlconfig.variables import ENVIRONMENT, HOSTS, MATRIX, SECURE_TEXT
from chalicelib.errors import Invalid

__all__ = ["DEFAULT_VERSION_FORMAT", "default_configuration", "from_yaml", "merge_repository_file", "to_yaml"]


def _scripts(key: str) -> Section:
    return single(key, SCRIPT_FIELDS[key], SCRIPTS)


def _commit_filter(key: str, prefix: str) -> Section:
    return group(
        key,
        {
            "message": (f"{prefix}Message", PATTERN),
            "author": (f"{prefix}Author", PATTERN),
            "files": (f"{prefix}Files", VALUES),
        },
    )


# Every top-level key but `version`, in the order to_yaml writes them.
_SECTIONS: dict[str, Section] = {
    "pull_requests": group(
        "pull_requests", {"do_not_increment_build_number": ("doNotIncrementBuildNumberOnPullRequests", FLAG)}
    ),
    "branches": branches({"only": ("includeBranches", PATTERNS), "except": ("excludeBranches", PATTERNS)}),
    "skip_tags": single("skip_tags", "skipTags", FLAG),
    "skip_non_tags": single("skip_non_tags", "skipNonTags", FLAG),
    "skip_commits": _commit_filter("skip_commits", "skipCommits"),
    "only_commits": _commit_filter("only_commits", "onlyCommits"),
    "skip_branch_with_pr": single("skip_branch_with_pr", "skipBranchWithPullRequests", FLAG),
    "max_jobs": single("max_jobs", "maxJobs", COUNT),
    "image": single("image", "operatingSystem", VALUES),
    "build_cloud": single("build_cloud", "buildCloud", VALUES),
    "stack": single("stack", "stacks", STACKS),
    "init": _scripts("init"),
    "clone_folder": single("clone_folder", "cloneFolder", TEXT),
    "clone_depth": single("clone_depth", "cloneDepth", COUNT),
    "shallow_clone": single("shallow_clone", "shallowClone", FLAG),
    "clone_script": _scripts("clone_script"),
    "hosts": single("hosts", "hostsEntries", HOSTS),
    "environment": ENVIRONMENT,
    "matrix": MATRIX,
    "cache": single("cache", "cacheEntries", VALUES),
    "services": single("services", "services", VALUES),
    "install": _scripts("install"),
    "assembly_info": group(
        "assembly_info",
        {
            "patch": ("patchAssemblyInfo", FLAG),
            "file": ("assemblyInfoFile", TEXT),
            "assembly_version": ("assemblyVersionFormat", TEXT),
            "assembly_file_version": ("assemblyFileVersionFormat", TEXT),
            "assembly_informational_version": ("assemblyInformationalVersionFormat", TEXT),
        },
    ),
    "dotnet_csproj": group(
        "dotnet_csproj",
        {
            "patch": ("patchDotnetCsproj", FLAG),
            "file": ("dotnetCsprojFile", TEXT),
            "version": ("dotnetCsprojVersionFormat", TEXT),
            "version_prefix": ("dotnetCsprojVersionPrefixFormat", TEXT),
            "package_version": ("dotnetCsprojPackageVersionFormat", TEXT),
            "assembly_version": ("dotnetCsprojAssemblyVersionFormat", TEXT),
            "file_version": ("dotnetCsprojFileVersionFormat", TEXT),
            "informational_version": ("dotnetCsprojInformationalVersionFormat", TEXT),
        },
    ),
    "nuget": group(
        "nuget",
        {
            "account_feed": ("configureNuGetAccountSource", FLAG),
            "project_feed": ("configureNuGetProjectSource", FLAG),
            "disable_publish_on_pr": ("disableNuGetPublishOnPullRequests", FLAG),
            "publish_wap_octopus": ("disableNuGetPublishForOctopusPackages", FLAG),
        },
    ),
    "xamarin": group(
        "xamarin",
        {
            "email": ("xamarinEmail", SECURE_TEXT),
            "password": ("xamarinPassword", SECURE_TEXT),
            "android": ("xamarinRegisterAndroidProduct", FLAG),
            "ios": ("xamarinRegisterIosProduct", FLAG),
        },
    ),
    "platform": single("platform", "platform", VALUES),
    "configuration": single("configuration", "configuration", VALUES),
    "build": BUILD,
    "build_script": mode_scripts("build_script", "buildScripts", "buildMode"),
    "before_build": _scripts("before_build"),
    "before_package": _scripts("before_package"),
    "after_build": _scripts("after_build"),
    "test": TEST,
    "test_script": mode_scripts("test_script", "testScripts", "testMode"),
    "before_test": _scripts("before_test"),
    "after_test": _scripts("after_test"),
    "artifacts": ARTIFACTS,
    "before_deploy": _scripts("before_deploy"),
    "deploy": DEPLOY,
    "deploy_script": mode_scripts("deploy_script", "deployScripts", "deployMode"),
    "after_deploy": _scripts("after_deploy"),
    "on_success": _scripts("on_success"),
    "on_failure": _scripts("on_failure"),
    "on_finish": _scripts("on_finish"),
    "notifications": NOTIFICATIONS,
}


def _version_format(value: Any) -> str | None:
    if value is None:
        return None
    version_format = text_value(value, "version")
    if "{build}" not in version_format:
        raise fail("version", "Version format must contain {build} variable.")
    return version_format


def _settings(document: Any) -> Json:
    if document is None:
        return {}
    if isinstance(document, list):
        raise Invalid(
            "appveyor.yml: a list of configurations per branch is not supported yet; write one mapping of settings."
        )
    settings = dict(mapping(document, "appveyor.yml", "a mapping of settings at the top level"))
    if "os" in settings:  # the older name of image
        if "image" in settings:
            raise fail("os", "os is the older name of image; use one of them.")
        settings["image"] = settings.pop("os")
    for key in settings:
        if key == "for":
            raise fail("for", "per-branch and per-job overrides are not supported yet.")
        if key != "version" and key not in _SECTIONS:
            raise fail(key, "unknown appveyor.yml setting.")
    return settings


def from_yaml(text: str) -> tuple[dict[str, Any], str | None]:
    """appveyor.yml text as (Configuration, version format or None when the file sets no version)."""
    settings = _settings(load(text))
    configuration = default_configuration()
    for key, section in _SECTIONS.items():
        if key in settings:
            section.read(settings[key], configuration)
    read_modes(settings, configuration)
    return configuration, _version_format(settings.get("version"))


def to_yaml(configuration: dict[str, Any], version_format: str | None) -> str:
    """appveyor.yml text holding every setting that differs from the defaults (fields absent count as default)."""
    full = {**DEFAULTS, **configuration}
    parts = [] if version_format is None else [dump("version", Plain(version_format))]
    for key, section in _SECTIONS.items():
        value = section.write(full)
        if value is not None:
            parts.append(dump(key, value))
    return "\n".join(parts)


def merge_repository_file(
    project_configuration: dict[str, Any], project_version_format: str, file_text: str
) -> tuple[dict[str, Any], str]:
    """The configuration a build runs with when the repository has its own appveyor.yml (AppVeyor's rules)."""
    configuration, version_format = from_yaml(file_text)
    project = {**DEFAULTS, **copy.deepcopy(project_configuration)}
    project_names = {variable["name"] for variable in project["environmentVariables"]}
    configuration["environmentVariables"] = project["environmentVariables"] + [
        variable for variable in configuration["environmentVariables"] if variable["name"] not in project_names
    ]
    notifications: list[Json] = []
    for notification in project["notifications"] + configuration["notifications"]:
        if notification not in notifications:
            notifications.append(notification)
    configuration["notifications"] = notifications
    return configuration, version_format or project_version_format
