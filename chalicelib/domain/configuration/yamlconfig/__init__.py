"""appveyor.yml <-> a project's Configuration (the API's ``settings.configuration``), both ways.

``from_yaml`` gives a canonical Configuration: every field of ``default_configuration()`` present, absent
optional scalars null, empty variables without a ``value`` key. ``to_yaml`` writes only what differs from the
defaults, in the order of AppVeyor's appveyor.yml reference. Field names the spec does not show are listed in
``defaults.py``; notification settings keep their appveyor.yml names and forms (``{"secure": ...}`` included).

A project's settings are one configuration. A repository's appveyor.yml may also be a list of configurations, or
hold ``for:`` items: ``read_repository_file`` reads it as a build of a given branch does (for_items.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from chalicelib.core.configuration import Configuration
from chalicelib.domain.configuration.yamlconfig.defaults import DEFAULT_VERSION_FORMAT, DEFAULTS, default_configuration
from chalicelib.domain.configuration.yamlconfig.for_items import (
    JOB_ITEMS,
    choose_configuration,
    cleared,
    job_item,
    job_parts,
    merge_branch_item,
    read_for,
    select,
)
from chalicelib.domain.configuration.yamlconfig.notifications import NOTIFICATIONS, UNSENT_CREDENTIALS
from chalicelib.domain.configuration.yamlconfig.pipeline import (
    ARTIFACTS,
    BUILD,
    DEPLOY,
    TEST,
    modes_written,
    read_modes,
)
from chalicelib.domain.configuration.yamlconfig.scalars import Plain, Scalar
from chalicelib.domain.configuration.yamlconfig.sections import (
    SCRIPT_FIELDS,
    SCRIPTS,
    STACKS,
    branches,
    group,
    mode_scripts,
    single,
)
from chalicelib.domain.configuration.yamlconfig.syntax import (
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
from chalicelib.domain.configuration.yamlconfig.syntax import text as text_value
from chalicelib.domain.configuration.yamlconfig.variables import ENVIRONMENT, HOSTS, MATRIX, SECURE_TEXT
from chalicelib.errors import Invalid

__all__ = [
    "DEFAULT_VERSION_FORMAT",
    "KEYS",
    "default_configuration",
    "from_yaml",
    "is_per_branch",
    "merge_repository_file",
    "read_settings_yaml",
    "written_configurations",
    "written_secrets",
    "read_repository_file",
    "to_yaml",
]


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
    "id_token": single("id_token", "idToken", FLAG),
    "id_token_pull_requests": single("id_token_pull_requests", "idTokenPullRequests", FLAG),
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


# A repository's appveyor.yml, checked before it is parsed: as long as a project's stored configuration may be
# (domain/projects/project_settings.py); its lists and rows are bounded where they are read (for_items.py, matrix.py).
MAX_REPOSITORY_FILE_BYTES = 200_000

# Every top-level key appveyor.yml takes here (os, the older name of image, aside): what
# domain/configuration/unhonoured.py sorts.
KEYS = ("version", *_SECTIONS, "for")


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
    settings = dict(mapping(document, "appveyor.yml", "a mapping of settings at the top level"))
    if "os" in settings:  # the older name of image
        if "image" in settings:
            raise fail("os", "os is the older name of image; use one of them.")
        settings["image"] = settings.pop("os")
    for key in settings:
        if key not in ("version", "for") and key not in _SECTIONS:
            raise fail(key, "unknown appveyor.yml setting.")
    return settings


def _read(settings: Json) -> tuple[Json, str | None]:
    configuration = copy.deepcopy(DEFAULTS)
    for key, section in _SECTIONS.items():
        if key in settings:
            section.read(settings[key], configuration)
    read_modes(settings, configuration)
    return configuration, _version_format(settings.get("version"))


def from_yaml(text: str) -> tuple[Configuration, str | None]:
    """appveyor.yml text as (Configuration, version format or None when the file sets no version): one
    configuration (a list form or for: items: ``read_settings_yaml``, or ``read_repository_file`` for a branch)."""
    document = load(text)
    if isinstance(document, list):
        raise Invalid("appveyor.yml: a list of configurations is read for a branch; write one mapping of settings.")
    settings = _settings(document)
    if "for" in settings:
        raise fail("for", "for: items are read for a branch; write one configuration without them.")
    configuration, version_format = _read(settings)
    return cast(Configuration, configuration), version_format


def is_per_branch(text: str) -> bool:
    """Whether appveyor.yml text holds more than one configuration: a list of them, or for: items."""
    document = load(text)
    return isinstance(document, list) or (isinstance(document, dict) and "for" in document)


def written_secrets(text: str) -> list[tuple[str, Any]]:
    """Every secret the text holds as written, with where: each ``secure:`` value, and each value of a key that
    names a credential (``auth_token``, ``password``, ...) written in plain text (a project's settings store a
    notification's as secure values)."""
    found: list[tuple[str, Any]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            if set(value) == {"secure"}:
                secure = value["secure"]
                found.append((path, secure.text if isinstance(secure, Scalar) else secure))
                return
            for key, item in value.items():
                if str(key) in UNSENT_CREDENTIALS and isinstance(item, str | Scalar):
                    found.append((f"{path}.{key}", item.text if isinstance(item, Scalar) else item))
                else:
                    walk(item, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")

    walk(load(text), "")
    return found


def written_configurations(text: str) -> list[Json]:
    """Every configuration of appveyor.yml text, each read on its own: the list's (or the one), without its for:
    items, and each for: item's settings (one that selects jobs as a build keeps it, under JOB_ITEMS). Their
    secrets are where a build of some branch may read them, each at the field secrets.secret_fields names."""
    document = load(text)
    found: list[Json] = []
    for index, item in enumerate(document if isinstance(document, list) else [document]):
        path = f"[{index}]" if isinstance(document, list) else ""
        with _under(path):
            settings = _settings(item)
            configuration, _ = _read({key: value for key, value in settings.items() if key != "for"})
        found.append(configuration)
        for for_item in read_for(settings.get("for"), f"{path}.for" if path else "for"):
            if for_item.jobs is None:
                kept, _ = cleared(for_item.settings)
                with _under(for_item.path):
                    found.append(_fields(_settings(kept))[0])
                continue
            overrides, filters, ignored = job_parts(for_item)
            kept, emptied = cleared(overrides)
            with _under(for_item.path):
                fields, _ = _fields(_settings(kept))
                filter_fields, _ = _fields(_settings(filters))
            found.append({JOB_ITEMS: [job_item(for_item, {**fields, **emptied}, filter_fields, ignored)]})
    return found


def read_settings_yaml(text: str, branch: str) -> tuple[Configuration, str | None]:
    """A project's settings YAML, which takes what appveyor.yml takes (as AppVeyor's YAML settings do): its
    configuration for ``branch`` (the list's first when none is for it), as a build of that branch reads it,
    without the for: items that select jobs (a project's settings show one configuration; its builds read the text
    for theirs). Every item is read, so a mistake in any is refused at once."""
    if not is_per_branch(text):
        return from_yaml(text)
    configuration, version_format = read_repository_file(text, branch, or_first=True)
    configuration.pop(JOB_ITEMS, None)
    return configuration, version_format


class _Written(dict[str, Any]):
    """A Configuration that notes the fields set in it: those an override's keys change."""

    def __init__(self, fields: Json) -> None:
        super().__init__(fields)
        self.names: list[str] = []

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        self.names.append(key)


def _fields(settings: Json) -> tuple[Json, str | None]:
    """The fields a for: item's settings set (and no other), and the version format it sets."""
    written = _Written(copy.deepcopy(DEFAULTS))
    for key, section in _SECTIONS.items():
        if key in settings:
            section.read(settings[key], written)
    fields = {name: written[name] for name in written.names}
    fields.update(modes_written(settings))
    return fields, _version_format(settings.get("version"))


@contextmanager
def _under(path: str) -> Iterator[None]:
    """An Invalid raised within names its key under ``path``: ``for[1].install: ...``."""
    try:
        yield
    except Invalid as error:
        raise Invalid(f"{path}.{error.message}" if path else error.message) from error


def _with_for_items(settings: Json, path: str, branch: str) -> tuple[Configuration, str | None]:
    """One configuration and its for: items: the item for the branch merged in, the items for jobs kept under
    JOB_ITEMS. Every item is read, chosen or not, so a mistake fails every build alike."""
    with _under(path):
        configuration, version_format = _read({key: value for key, value in settings.items() if key != "for"})
    items = read_for(settings.get("for"), f"{path}.for" if path else "for")
    branch_items = [item for item in items if item.jobs is None]
    chosen = select([item.branches for item in branch_items], branch)
    job_items = []
    for item in items:
        if item.jobs is None:
            kept, emptied = cleared(item.settings)
            with _under(item.path):
                fields, item_version = _fields(_settings(kept))
            if chosen is not None and item is branch_items[chosen]:
                configuration = merge_branch_item(configuration, fields, emptied)
                version_format = item_version or version_format
            continue
        overrides, filters, ignored = job_parts(item)
        kept, emptied = cleared(overrides)
        with _under(item.path):
            fields, _ = _fields(_settings(kept))
            filter_fields, _ = _fields(_settings(filters))
        job_items.append(job_item(item, {**fields, **emptied}, filter_fields, ignored))
    if job_items:
        configuration[JOB_ITEMS] = job_items
    return cast(Configuration, configuration), version_format


def read_repository_file(text: str, branch: str, or_first: bool = False) -> tuple[Configuration, str | None]:
    """A repository's appveyor.yml as a build of ``branch`` (a tag's name, a pull request's target) reads it: the
    list form's configuration for that branch (or, with ``or_first``, the first when none is for it), with its for:
    items (for_items.py has AppVeyor's rules). Invalid, before it is parsed, when the file is longer than
    MAX_REPOSITORY_FILE_BYTES."""
    size = len(text.encode())
    if size > MAX_REPOSITORY_FILE_BYTES:
        raise Invalid(f"appveyor.yml is {size} bytes long; at most {MAX_REPOSITORY_FILE_BYTES} are allowed.")
    document = load(text)
    if not isinstance(document, list):
        return _with_for_items(_settings(document), "", branch)
    chosen = choose_configuration(document, branch, or_first)
    read = []
    for index, item in enumerate(document):
        with _under(f"[{index}]"):
            settings = _settings(item)
        read.append(_with_for_items(settings, f"[{index}]", branch))
    return read[chosen]


def to_yaml(configuration: Mapping[str, Any], version_format: str | None) -> str:
    """appveyor.yml text holding every setting that differs from the defaults (fields absent count as default)."""
    full = {**DEFAULTS, **configuration}
    parts = [] if version_format is None else [dump("version", Plain(version_format))]
    for key, section in _SECTIONS.items():
        value = section.write(full)
        if value is not None:
            parts.append(dump(key, value))
    return "\n".join(parts)


def merge_repository_file(
    project_configuration: Mapping[str, Any], project_version_format: str, file_text: str, branch: str = ""
) -> tuple[Configuration, str]:
    """The configuration a build of ``branch`` runs with when the repository has its own appveyor.yml (AppVeyor's
    rules: the project's variables win over the file's, notifications of both are sent)."""
    configuration, version_format = read_repository_file(file_text, branch)
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
    for item in configuration.get(JOB_ITEMS, []):  # over a job item's variables too
        variables = item["fields"].get("environmentVariables")
        if variables is not None:
            item["fields"]["environmentVariables"] = [var for var in variables if var["name"] not in project_names]
    return configuration, version_format or project_version_format
