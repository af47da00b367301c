"""A build's jobs: AppVeyor's build matrix over a project Configuration; and a build's version.

The jobs are the Cartesian product of images, environment matrix rows, configurations and platforms (an empty
dimension counts once, with no value), image outermost and platform innermost, minus ``matrix.exclude`` and
``matrix.except``, kept to ``matrix.only`` when it is set, then numbered 1..n.

A job's name has one ``Dimension: value`` part per dimension the Configuration lists (even with a single value),
joined by ``"; "`` in the order Image, Environment, Configuration, Platform; the Environment part is the row's
variables as ``NAME=value`` joined by ``", "``, an encrypted value shown as ``[secure]``. A row's ``job_name``
is the whole name; a build of one job otherwise has the name ``""``.

The job-workflow keys of a row (``job_name``, ``job_group``, ``jobs_per_group``, ``job_depends_on``,
``job_allow_cancellation``) are not part of the job's variables nor of its name. ``APPVEYOR_BUILD_WORKER_IMAGE``
in a row is an ordinary variable that also sets the job's image (AppVeyor names such jobs
``Environment: APPVEYOR_BUILD_WORKER_IMAGE=Visual Studio 2015, ...``).

A condition row (exclude, only, except, allow_failures) matches a job when every one of its keys does, so a row
without keys matches every job: ``image``/``os``, ``configuration`` and ``platform`` (keys in any case) compare
with the job's values; ``test_category`` matches no job (there is no test-category dimension); any other key is a
variable of the job's environment (its row, else the common variables), an absent one reading as empty. Values
compare exactly, case included.

appveyor.yml's ``for:`` items with ``matrix: only/except`` (rows written as conditions) select jobs alike: each job
notes which of the configuration's items (``jobOverrides``) select it, and its own settings apply them.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chalicelib.core.configuration import Configuration
from chalicelib.domain.configuration.yamlconfig.for_items import JOB_ITEMS
from chalicelib.errors import Invalid

Json = dict[str, Any]
MAX_JOBS = 90  # a build, its jobs, its version claim and its project's summary: one transaction (≤ 100 items)
# The product before exclusions: each of its cells is matched against every exclusion, so it is bounded before
# any cell is made (3,000 configurations x 3,000 platforms would be 9,000,000 of them).
MAX_COMBINATIONS = 1000
# Matrix conditions (matrix exclude, only, except and allow_failures rows, and for: items' matrix only and except
# rows), in all: every cell is matched against them, key by key, before any job is made.
MAX_CONDITION_ROWS = 200
MAX_CONDITION_KEYS = 1000
_CONDITIONS = ("matrixExclude", "matrixOnly", "matrixExcept", "matrixAllowFailures")

_WORKFLOW_KEYS = frozenset({"job_name", "job_group", "jobs_per_group", "job_depends_on", "job_allow_cancellation"})
_IMAGE_VARIABLE = "APPVEYOR_BUILD_WORKER_IMAGE"
_SECURE_SHOWN = "[secure]"
_VERSION_PLACEHOLDER = re.compile(r"\{(build|branch)\}")


@dataclass(frozen=True)
class MatrixJob:
    """One job of the build matrix: a cell of its product that its exclusions kept (not the spec a runner is sent)."""

    number: int  # 1, 2, ... in matrix order (APPVEYOR_JOB_NUMBER)
    name: str  # AppVeyor's job name; "" for a single-job build
    image: str | None
    configuration: str | None
    platform: str | None
    variables: tuple[dict[str, Any], ...]  # named values of the job's matrix row, in order, without workflow keys
    allow_failure: bool
    overrides: tuple[int, ...] = ()  # the configuration's for: items that select the job (their indexes)


@dataclass(frozen=True)
class _Combination:
    """One cell of the product, before exclusions: the row is kept whole, workflow keys included."""

    image: str | None
    row: tuple[Json, ...]
    configuration: str | None
    platform: str | None
    named: dict[str, Json]  # the row's values by name (the first of a name): a condition key is one look-up

    @property
    def variables(self) -> tuple[Json, ...]:
        return tuple(variable for variable in self.row if variable["name"] not in _WORKFLOW_KEYS)

    def row_value(self, name: str) -> Json | None:
        return self.named.get(name)


def matrix_jobs(configuration: Configuration) -> list[MatrixJob]:
    """The jobs of a build: the product of images, env matrix rows, configurations and platforms, minus exclusions.

    Invalid, before any job is made, when the matrix has more condition rows or keys than allowed, or the product
    more than MAX_COMBINATIONS cells; and when more than MAX_JOBS jobs are left."""
    _check_conditions(configuration)
    images = _values(configuration, "operatingSystem")
    rows = [tuple(row.get("variables") or ()) for row in configuration.get("environmentVariablesMatrix") or []]
    configurations = _values(configuration, "configuration")
    platforms = _values(configuration, "platform")
    common = {variable["name"]: variable["value"] for variable in configuration.get("environmentVariables") or []}

    def matches_any(conditions: list[Json] | None, combination: _Combination) -> bool:
        return any(_matches(condition, combination, common) for condition in conditions or [])

    def overrides(combination: _Combination) -> tuple[int, ...]:
        """The for: items whose only rows (when it has some) match the job and whose except rows do not."""
        return tuple(
            index
            for index, item in enumerate(configuration.get(JOB_ITEMS) or [])
            if (not item["only"] or any(_matches(row, combination, common) for row in item["only"]))
            and not any(_matches(row, combination, common) for row in item["except"])
        )

    named_rows = [(row, _named(row)) for row in rows] or [((), {})]
    dimensions = (_or_none(images), named_rows, _or_none(configurations), _or_none(platforms))
    size = math.prod(len(dimension) for dimension in dimensions)
    if size > MAX_COMBINATIONS:
        raise Invalid(
            f"The build matrix has {size} combinations of images, environment rows, configurations and platforms; "
            f"at most {MAX_COMBINATIONS} are allowed (before exclusions), and at most {MAX_JOBS} jobs."
        )
    combinations = [
        _Combination(_text(named.get(_IMAGE_VARIABLE)) or image, row, build_configuration, platform, named)
        for image, (row, named), build_configuration, platform in itertools.product(*dimensions)
    ]
    kept = [
        combination
        for combination in combinations
        if not matches_any(configuration.get("matrixExclude"), combination)
        and not matches_any(configuration.get("matrixExcept"), combination)
        and (not configuration.get("matrixOnly") or matches_any(configuration.get("matrixOnly"), combination))
    ]
    if len(kept) > MAX_JOBS:
        raise Invalid(f"The build matrix has {len(kept)} jobs; at most {MAX_JOBS} are allowed.")

    def name(combination: _Combination) -> str:
        job_name = _text(combination.row_value("job_name"))
        if job_name:
            return job_name
        if len(kept) == 1:
            return ""
        parts = [
            ("Image", combination.image if images else None),
            (
                "Environment",
                ", ".join(f"{variable['name']}={_shown(variable['value'])}" for variable in combination.variables)
                if rows
                else None,
            ),
            ("Configuration", combination.configuration),
            ("Platform", combination.platform),
        ]
        return "; ".join(f"{dimension}: {value}" for dimension, value in parts if value)

    return [
        MatrixJob(
            number=number,
            name=name(combination),
            image=combination.image,
            configuration=combination.configuration,
            platform=combination.platform,
            variables=combination.variables,
            allow_failure=matches_any(configuration.get("matrixAllowFailures"), combination),
            overrides=overrides(combination),
        )
        for number, combination in enumerate(kept, start=1)
    ]


def _check_conditions(configuration: Mapping[str, Any]) -> None:
    """Invalid, naming the limit, when the matrix's conditions have more rows or keys than are allowed in all."""
    rows = [row for key in _CONDITIONS for row in configuration.get(key) or []]
    rows += [row for item in configuration.get(JOB_ITEMS) or [] for row in (*item["only"], *item["except"])]
    keys = sum(len(row.get("variables") or []) for row in rows)
    where = "matrix exclude, only, except and allow_failures, and for: items' matrix only and except"
    if len(rows) > MAX_CONDITION_ROWS:
        raise Invalid(
            f"The build matrix has {len(rows)} condition rows ({where}); at most {MAX_CONDITION_ROWS} are allowed."
        )
    if keys > MAX_CONDITION_KEYS:
        raise Invalid(
            f"The build matrix's condition rows ({where}) have {keys} keys in all; at most {MAX_CONDITION_KEYS} "
            "are allowed."
        )


def build_version(version_format: str, build_number: int, branch: str) -> str:
    """A build's version: {build} and {branch} replaced (AppVeyor's placeholders)."""
    replacements = {"build": str(build_number), "branch": branch}
    return _VERSION_PLACEHOLDER.sub(lambda match: replacements[match.group(1)], version_format)


def version_build_number(version_format: str, version: str) -> int | None:
    """The build number ``version_format`` gives ``version`` (on any branch; versions match regardless of case), or
    None when it gives it to no build (or names {branch} more than twice: not looked into, a match would take long)."""
    if version_format.count("{branch}") > 2:
        return None
    pattern, builds = [], 0
    for index, part in enumerate(_VERSION_PLACEHOLDER.split(version_format)):
        if index % 2 == 0:
            pattern.append(re.escape(part))
        elif part == "branch":
            pattern.append(".*")
        else:  # every {build} is the same number, written without leading zeros
            builds += 1
            pattern.append("(?P<build>0|[1-9][0-9]*)" if builds == 1 else "(?P=build)")
    found = re.fullmatch("".join(pattern), version, re.IGNORECASE)
    return int(found["build"]) if found is not None and builds else None


def _values(configuration: Mapping[str, Any], key: str) -> list[str]:
    return [item["value"] for item in configuration.get(key) or [] if item.get("value")]


def _or_none(values: list[str]) -> list[str | None]:
    """A dimension's values; an empty dimension still counts once, with no value."""
    return [*values] or [None]


def _named(row: Sequence[Json]) -> dict[str, Json]:
    """A row's values by name, the first of a name winning."""
    named: dict[str, Json] = {}
    for variable in row:
        named.setdefault(variable["name"], variable["value"])
    return named


def _text(stored: Json | None) -> str | None:
    return None if stored is None else stored.get("value") or None


def _shown(stored: Json) -> str:
    return _SECURE_SHOWN if stored.get("isEncrypted") else stored.get("value") or ""


def _stored(stored: Json | None) -> tuple[bool, str | None]:
    """A stored value compared as (encrypted?, text); an absent variable is an empty one."""
    return (False, None) if stored is None else (bool(stored.get("isEncrypted")), stored.get("value") or None)


def _matches(condition: Json, combination: _Combination, common: dict[str, Json]) -> bool:
    """Whether every key of a matrix condition (exclude, only, except, allow_failures row) holds for the job."""
    return all(_holds(variable, combination, common) for variable in condition.get("variables") or [])


def _holds(condition: Json, combination: _Combination, common: dict[str, Json]) -> bool:
    key, wanted = condition["name"], condition["value"]
    dimension = key.lower()
    if dimension in ("image", "os"):
        return combination.image == _text(wanted)
    if dimension == "configuration":
        return combination.configuration == _text(wanted)
    if dimension == "platform":
        return combination.platform == _text(wanted)
    if dimension == "test_category":
        return False  # Conveyor has no test-category dimension: no job runs "a category", so none matches
    # Any other key is an environment variable: the row's value, else the common one (the job's environment).
    actual = combination.row_value(key)
    return _stored(common.get(key) if actual is None else actual) == _stored(wanted)
