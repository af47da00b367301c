"""An inline deployment's ``on:`` conditions, read from appveyor.yml as a build stores them, against a job's
branch and variables: every condition must hold; names and values compare without regard to case, /regex/ values
search, an empty value means unset, and a secure value is never compared."""

from __future__ import annotations

import pytest

from chalicelib.domain.configuration.yamlconfig import from_yaml
from chalicelib.domain.deployments.deploy_conditions import JobVariables, conditions_hold

VARIABLES = JobVariables(
    {"APPVEYOR_REPO_TAG": "false", "PLATFORM": "x64", "TARGET": "arm", "EMPTY": ""}, frozenset({"token"})
)


def entry(conditions: str) -> dict[str, object]:
    """The configuration's one deploy entry with ``on:`` given as YAML lines (indented under on:)."""
    configuration, _ = from_yaml(f"deploy:\n  - provider: FTP\n    on:\n{conditions}")
    (deployment,) = configuration["deployments"]
    assert isinstance(deployment, dict)
    return deployment


@pytest.mark.parametrize(
    ("conditions", "branch", "holds"),
    [
        ("      branch: main\n", "main", True),
        ("      branch: main\n", "Main", False),  # branch names compare exactly, as branches: only does
        ("      branch: main\n", "release", False),
        ("      branch: [main, /^release-\\d+$/]\n", "release-12", True),
        ("      branch: [main, /^release-\\d+$/]\n", "release-x", False),
        ("      platform: X64\n", "any", True),  # the name is PLATFORM's, the value compares without case
        ("      appveyor_repo_tag: false\n", "any", True),
        ("      appveyor_repo_tag: true\n", "any", False),
        ("      target: /^ar/\n", "any", True),
        ("      missing: ''\n", "any", True),  # an empty value holds where the variable is unset
        ("      empty: ''\n", "any", True),
        ("      target: ''\n", "any", False),
        ("      missing: something\n", "any", False),
        ("      token: ''\n", "any", False),  # a secure variable is set, though its value is not decrypted to compare
        ("      branch: main\n      target: arm\n", "main", True),
        ("      branch: main\n      target: x86\n", "main", False),  # every condition must hold
    ],
)
def test_conditions(conditions: str, branch: str, holds: bool) -> None:
    assert conditions_hold(entry(conditions), branch, VARIABLES) is holds


def test_an_entry_without_conditions_deploys_from_every_branch() -> None:
    configuration, _ = from_yaml("deploy:\n  - provider: FTP\n")
    assert conditions_hold(configuration["deployments"][0], "anything", VARIABLES)


def test_a_secure_condition_never_holds() -> None:
    secure = entry("      target:\n        secure: arm\n")  # the very value TARGET has: never compared
    assert not conditions_hold(secure, "main", VARIABLES)
