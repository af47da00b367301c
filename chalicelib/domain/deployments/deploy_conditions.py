"""Whether an inline deployment's ``on:`` conditions hold for one job of a build (AppVeyor's "Conditional
deployment"): every condition must hold.

- ``branch``: the build's branch (a tag build's is the tag's name, as APPVEYOR_REPO_BRANCH), equal to one of the
  values, or found by one written ``/regex/`` (on RE2, domain/configuration/user_regex.py).
- Any other key names a variable of the job, without regard to case (``platform`` is PLATFORM,
  ``appveyor_repo_tag`` is APPVEYOR_REPO_TAG); its value is compared without regard to case (``true`` and
  ``True``), or searched by a ``/regex/``; an empty value holds where the variable is unset or empty (AppVeyor's
  ``APPVEYOR_PULL_REQUEST_NUMBER: ''`` for "not a pull request").

Values compared are the job's plain ones: a secure variable, or a secure condition, is not decrypted to be compared,
so a condition on one does not hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.configuration import Configuration
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.domain.builds.job_environment import appveyor_variables
from chalicelib.domain.configuration.user_regex import compile_pattern, is_pattern
from chalicelib.errors import Invalid


@dataclass(frozen=True)
class JobVariables:
    """A job's plain variables by name, and the lower-cased names of its secure ones (not decrypted here)."""

    values: dict[str, str]
    secure: frozenset[str]

    @cached_property
    def _by_key(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.values.items()}

    def holds(self, name: str, expected: str) -> bool:
        """Whether the variable ``name`` (any case) has the ``expected`` value (plain, any case, or ``/regex/``)."""
        key = name.lower()
        if key in self.secure:
            return False
        value = self._by_key.get(key, "")
        return _found(expected, value) if is_pattern(expected) else value.lower() == expected.lower()


def job_variables(project: Project, build: Build, job: Job, configuration: Configuration) -> JobVariables:
    """The job's variables, in the order its scripts see them (AppVeyor's, its ``configuration``'s, its matrix
    row's, the start request's), without decrypting any; what ``on:`` conditions test. A start request's variables
    never replace the service's own (APPVEYOR_REPO_TAG, APPVEYOR_REPO_BRANCH...): who may start a build may not
    thereby deploy it as a tag."""
    values = appveyor_variables(project, build, job, None)
    secure: set[str] = set()
    named: list[Any] = [*configuration.get("environmentVariables", []), *job.spec.get("variables", [])]
    for variable in named:
        if not isinstance(variable, dict) or not isinstance(variable.get("name"), str):
            continue
        name, value = variable["name"], variable.get("value") or {}
        if value.get("isEncrypted"):
            _unset(values, name)
            secure.add(name.lower())
        else:
            _set(values, secure, name, str(value.get("value") or ""))
    built_in = {name.lower() for name in appveyor_variables(project, build, job, None)}
    for name, text in build.request_variables.items():
        if name.lower() not in built_in:  # a start request may not pass for a tag, a branch or another project
            _set(values, secure, name, text)
    return JobVariables(values, frozenset(secure))


def _set(values: dict[str, str], secure: set[str], name: str, text: str) -> None:
    """A later variable replaces an earlier one of the same name in any case (as on Windows)."""
    _unset(values, name)
    secure.discard(name.lower())
    values[name] = text


def _unset(values: dict[str, str], name: str) -> None:
    for known in [known for known in values if known.lower() == name.lower()]:
        del values[known]


def conditions_hold(entry: dict[str, Any], branch: str, variables: JobVariables) -> bool:
    """Whether every ``on:`` condition of a configuration's deployment entry holds."""
    branches = list(_texts(entry.get("onBranch")))
    if branches and not any(_branch_matches(rule, branch) for rule in branches):
        return False
    for condition in entry.get("onEnvironmentVariables") or []:
        if not isinstance(condition, dict) or not isinstance(condition.get("name"), str):
            return False
        value = condition.get("value") or {}
        if value.get("isEncrypted") or not variables.holds(condition["name"], str(value.get("value") or "")):
            return False
    return True


def _branch_matches(rule: str, branch: str) -> bool:
    return _found(rule, branch) if is_pattern(rule) else rule == branch  # as branches: only/except compare names


def _found(rule: str, text: str) -> bool:
    """Whether the ``/regex/`` finds a match in the text; one RE2 cannot run (checked when saved) holds nowhere."""
    try:
        return compile_pattern(rule).search(text) is not None
    except Invalid:
        return False


def _texts(entries: Any) -> Iterable[str]:
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("value"):
            yield str(entry["value"])
