"""appveyor.yml's list of configurations and its ``for:`` items: which settings a branch, or a job, builds with.

AppVeyor's rules (its docs: "Conditional build configuration" and "Sharing common configuration between branches"
on the branches page; "Specializing matrix job configuration" and "Skip matrix jobs conditionally" on the
build-configuration page):

- A top-level list of configurations is a selector, not a filter: the first configuration whose ``branches.only``
  names the branch, else the first (without ``only``) whose ``branches.except`` does not, else the first without
  ``branches``; else nothing is built.
- A ``for:`` item with ``branches`` overrides the common settings on the branches it selects; of several items
  the same rule chooses one (an item without any selector is the fall-back). Scalars and scripts replace;
  environment variables merge by name, the item's winning; environment matrix rows, ``matrix.allow_failures``
  and ``matrix.exclude``, artifacts and deploy entries are added to the common ones; ``off`` or ``none`` clears
  artifacts, deploy or notifications; notifications replace.
- A ``for:`` item with ``matrix: only/except`` (rows written as in ``allow_failures``) specialises the jobs it
  selects: its environment variables merge by name, its notifications join the build's, anything else replaces.
  What AppVeyor ignores there (the version, the matrix's dimensions and settings, pull_requests, max_jobs, nuget)
  is named in each such job's log. Its ``branches``, ``skip_tags``, ``skip_non_tags``, ``skip_commits`` and
  ``only_commits`` skip only the jobs it selects, in builds a webhook starts (as the top-level filters).

The branch is the one the build's filters see: the branch pushed, a tag's name, a pull request's target branch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from chalicelib.domain.configuration.filters import branch_matches
from chalicelib.domain.configuration.yamlconfig.syntax import PATTERNS, Json, fail, is_off, items, mapping
from chalicelib.domain.configuration.yamlconfig.variables import ROWS
from chalicelib.errors import Invalid

JOB_ITEMS: Final = "jobOverrides"  # a build's configuration: its for: items that select jobs, which each job applies
# Every configuration of the list and every item of its for: is read, whichever the branch: bounded before any is.
MAX_CONFIGURATIONS = 20
MAX_FOR_ITEMS = 50

# A branch selector: its (only, except) patterns; None for a configuration or item that names no branch.
Selector = tuple[list[str], list[str]] | None

# Lists a for: item switches off with `off` or `none`, and the fields that empties.
_CLEARED: dict[str, Json] = {
    "artifacts": {"artifacts": []},
    "deploy": {"deployments": [], "deployMode": "none"},
    "notifications": {"notifications": []},
}
_ADDED = ("environmentVariablesMatrix", "matrixAllowFailures", "matrixExclude", "artifacts", "deployments")
_JOB_FILTERS = ("branches", "skip_tags", "skip_non_tags", "skip_commits", "only_commits")
# What AppVeyor ignores in an item that selects jobs: the whole build's settings, and the matrix's dimensions.
_NOT_PER_JOB = (
    "version",
    "image",
    "os",
    "build_cloud",
    "configuration",
    "platform",
    "pull_requests",
    "max_jobs",
    "nuget",
    "skip_branch_with_pr",
)
_ITEM_SHAPE = "a mapping of a selector (branches, or matrix with only or except) and the settings it overrides"


@dataclass(frozen=True)
class ForItem:
    """One item of ``for:``: where it is written, what selects it, and its settings (the selector taken out)."""

    path: str  # "for[1]", or "[0].for[1]" in the list form
    settings: Json
    branches: Selector = None  # an item for branches: the branches it is for (None: the fall-back)
    jobs: Json | None = None  # an item for jobs: its matrix rows, {"only": rows, "except": rows}


def read_selector(value: Any, path: str) -> Selector:
    """``branches: {only, except}`` as a selector; None when it names no branch."""
    if value is None:
        return None
    written = mapping(value, path, "a mapping of only and except")
    for name in written:
        if name not in ("only", "except"):
            raise fail(f"{path}.{name}", "unknown setting; expected one of only, except.")
    only, excepted = (
        [entry["value"] for entry in PATTERNS.read(written[name], f"{path}.{name}") if entry["value"]]
        if written.get(name) is not None
        else []
        for name in ("only", "except")
    )
    return (only, excepted) if only or excepted else None


def select(selectors: list[Selector], branch: str) -> int | None:
    """AppVeyor's choice among configurations: the first whose ``only`` names the branch, else the first (without
    ``only``) whose ``except`` does not, else the first without ``branches``; None when none is for the branch."""

    def names(rules: list[str]) -> bool:
        return any(branch_matches(rule, branch) for rule in rules)

    steps = (
        lambda selector: selector is not None and names(selector[0]),
        lambda selector: selector is not None and not selector[0] and not names(selector[1]),
        lambda selector: selector is None,
    )
    for step in steps:
        chosen = next((index for index, selector in enumerate(selectors) if step(selector)), None)
        if chosen is not None:
            return chosen
    return None


def choose_configuration(document: list[Any], branch: str, or_first: bool = False) -> int:
    """The list form: the index of the configuration the branch builds with; Invalid when none is for it (the
    first one's with ``or_first``), or when the list holds more than MAX_CONFIGURATIONS."""
    if len(document) > MAX_CONFIGURATIONS:
        raise Invalid(f"appveyor.yml holds {len(document)} configurations; at most {MAX_CONFIGURATIONS} are allowed.")
    selectors = [
        read_selector(mapping(item, f"[{index}]", "a mapping of settings").get("branches"), f"[{index}].branches")
        for index, item in enumerate(document)
    ]
    chosen = select(selectors, branch)
    if chosen is None and or_first:
        return 0
    if chosen is None:
        raise Invalid(
            f"appveyor.yml: none of its {len(document)} configurations is for branch '{branch}' (the list's "
            "branches.only and branches.except choose one), so there is nothing to build."
        )
    return chosen


def read_for(value: Any, path: str) -> list[ForItem]:
    """The items of ``for:`` with their selectors; Invalid, naming the item, for one of the wrong shape, and when
    there are more than MAX_FOR_ITEMS."""
    if isinstance(value, list) and len(value) > MAX_FOR_ITEMS:
        raise fail(path, f"{len(value)} items; at most {MAX_FOR_ITEMS} are allowed.")
    found = []
    for item, where in items(value, path):
        settings = dict(mapping(item, where, _ITEM_SHAPE))
        if "for" in settings:
            raise fail(f"{where}.for", "a for item holds no for of its own.")
        matrix = settings.get("matrix")
        if isinstance(matrix, dict) and {"only", "except"} & set(matrix):
            selector = {
                name: [] if matrix.get(name) is None else ROWS.read(matrix[name], f"{where}.matrix.{name}")
                for name in ("only", "except")
            }
            found.append(ForItem(where, settings, jobs=selector))
        else:
            selected = read_selector(settings.pop("branches", None), f"{where}.branches")
            found.append(ForItem(where, settings, branches=selected))
    return found


def cleared(settings: Json) -> tuple[Json, Json]:
    """An item's settings without the lists it switches off (``off`` or ``none``), and the emptied fields."""
    kept: Json = dict(settings)
    emptied: Json = {}
    for key, fields in _CLEARED.items():
        if key in kept and (is_off(kept[key]) or kept[key] == "none"):
            del kept[key]
            emptied.update(copy.deepcopy(fields))
    return kept, emptied


def job_parts(item: ForItem) -> tuple[Json, Json, list[str]]:
    """A job item's settings as (what it overrides, its job filters, the keys AppVeyor ignores there)."""
    settings = dict(item.settings)
    ignored = [key for key in _NOT_PER_JOB if key in settings]
    for key in ignored:
        del settings[key]
    ignored += [f"matrix.{name}" for name in settings.pop("matrix") if name not in ("only", "except")]
    environment = settings.get("environment")
    if isinstance(environment, dict) and "matrix" in environment:
        settings["environment"] = {name: value for name, value in environment.items() if name != "matrix"}
        ignored.append("environment.matrix")
    filters = {key: settings.pop(key) for key in _JOB_FILTERS if key in settings}
    return settings, filters, ignored


def job_item(item: ForItem, fields: Json, filters: Json, ignored: list[str]) -> Json:
    """A job item as the build's configuration keeps it (under JOB_ITEMS), for each job it selects to apply."""
    assert item.jobs is not None
    return {
        "item": item.path,
        "only": item.jobs["only"],
        "except": item.jobs["except"],
        "fields": fields,
        "filters": filters,
        "ignored": ignored,
    }


def merge_branch_item(base: Json, fields: Json, emptied: Json) -> Json:
    """The common configuration with a branch item's fields, by AppVeyor's rules (see the module's docstring)."""
    merged = copy.deepcopy(base)
    merged.update(copy.deepcopy(emptied))
    for field, value in copy.deepcopy(fields).items():
        if field == "environmentVariables":
            merged[field] = by_name(merged.get(field) or [], value)
        elif field in _ADDED:
            merged[field] = (merged.get(field) or []) + value
        else:
            merged[field] = value
    return merged


def merge_job_item(base: Mapping[str, Any], fields: Mapping[str, Any]) -> Json:
    """A job's configuration: the build's with a job item's fields (variables merged by name, the rest replaced;
    notifications stay the build's, which the item's joined when the build was queued)."""
    merged = dict(base)
    for field, value in copy.deepcopy(fields).items():
        if field == "environmentVariables":
            merged[field] = by_name(merged.get(field) or [], value)
        elif field != "notifications":
            merged[field] = value
    return merged


def by_name(variables: list[Json], overrides: list[Json]) -> list[Json]:
    """Named values merged: an override replaces the value of its name where it stands, a new name is added."""
    replacing = {variable["name"]: variable for variable in overrides}
    merged = [replacing.pop(variable["name"], variable) for variable in variables]
    return merged + [variable for variable in overrides if variable["name"] in replacing]
