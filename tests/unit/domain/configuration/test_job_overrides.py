"""What a job's runner is told of its configuration: how deep it fetches, and the settings it honours only."""

from __future__ import annotations

import pytest

from chalicelib.core.configuration import Configuration
from chalicelib.domain.configuration.job_overrides import fetch_depth, runner_settings
from chalicelib.domain.configuration.yamlconfig import from_yaml


@pytest.mark.parametrize(
    ("written", "depth"),
    [("", None), ("shallow_clone: true", 1), ("clone_depth: 5", 5), ("clone_depth: 5\nshallow_clone: true", 5)],
)
def test_a_job_fetches_clone_depth_commits_one_when_shallow_else_the_whole_history(
    written: str, depth: int | None
) -> None:
    configuration, _ = from_yaml(written)

    assert fetch_depth(configuration) == depth


def test_a_runner_is_told_only_the_settings_it_honours_that_the_configuration_holds() -> None:
    stored_before: Configuration = {"buildScripts": [{"language": "cmd", "script": "make"}], "deployments": []}

    assert runner_settings(stored_before) == {"buildScripts": [{"language": "cmd", "script": "make"}]}
