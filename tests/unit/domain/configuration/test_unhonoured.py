"""Every appveyor.yml key HONOURED says the runner honours reaches the runner: each field it sets is a setting of
the job spec (protocol/job_spec.JobConfiguration), sent as written, so a key the runner should honour cannot be
dropped from the spec in silence; and the spec sends no setting appveyor.yml cannot set."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.domain.configuration import unhonoured
from chalicelib.domain.configuration.job_overrides import runner_settings
from chalicelib.domain.configuration.yamlconfig import default_configuration, from_yaml
from chalicelib.protocol.job_spec import JobConfiguration

# the keys a runner honours: everywhere, and on a Windows build agent only (build:, its MSBuild mode)
RUNNER_KEYS = [
    *[key for key, where in unhonoured.HONOURED.items() if where.startswith("the runner")],
    *[key for key, where in unhonoured.HONOURED_ON_WINDOWS.items() if where.startswith("the runner")],
]
# appveyor.yml that sets each key the runner honours (a script key when not named here), and stack: and services:,
# which it honours in Conveyor's image (refused elsewhere)
WRITTEN = {
    "build": "build: {project: App.sln, verbosity: quiet, parallel: true}",
    "clone_folder": "clone_folder: /projects/app",
    "clone_depth": "clone_depth: 3",
    "shallow_clone": "shallow_clone: true",
    "cache": "cache: [node_modules -> package.json]",
    "artifacts": "artifacts: [{path: dist/*.whl}]",
    "stack": "stack: node 20",
    "services": "services: [postgresql]",
}


def fields_set(key: str) -> dict[str, Any]:
    """The configuration's fields appveyor.yml's ``key`` sets, with their values."""
    configuration, _ = from_yaml(WRITTEN.get(key, f"{key}: [echo {key}]"))
    defaults = default_configuration()
    return {field: value for field, value in configuration.items() if value != defaults.get(field)}


def test_the_runner_honours_the_scripts_msbuild_the_fetch_the_cache_and_the_artifacts() -> None:
    some = {"init", "clone_script", "clone_depth", "build_script", "build", "cache", "artifacts", "on_finish"}

    assert some <= set(RUNNER_KEYS)


@pytest.mark.parametrize("key", RUNNER_KEYS)
def test_each_field_a_key_the_runner_honours_sets_is_sent_to_the_runner(key: str) -> None:
    configuration, _ = from_yaml(WRITTEN.get(key, f"{key}: [echo {key}]"))
    written = fields_set(key)

    sent = runner_settings(configuration)

    assert written, f"appveyor.yml {key}: sets no field: give it a value in WRITTEN"
    assert {field: sent.get(field) for field in written} == written, f"{key}: a field is not in JobConfiguration"


def test_the_job_spec_holds_no_setting_appveyor_yml_does_not_set_for_the_runner() -> None:
    set_for_the_runner = {field for key in [*RUNNER_KEYS, "stack", "services"] for field in fields_set(key)}

    assert set_for_the_runner == set(JobConfiguration.__annotations__)
