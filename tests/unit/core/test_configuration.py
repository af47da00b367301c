"""The configuration's type names every field domain/configuration/ stores, and types the settings a runner is
sent as the job spec does: mypy checks each key read outside domain/configuration/ against it."""

from __future__ import annotations

from typing import get_type_hints

from chalicelib.core.configuration import Configuration, JobOverride
from chalicelib.domain.configuration.yamlconfig import read_repository_file
from chalicelib.domain.configuration.yamlconfig.defaults import DEFAULTS
from chalicelib.domain.configuration.yamlconfig.for_items import JOB_ITEMS
from chalicelib.protocol.job_spec import JobConfiguration

JOB_ITEM_YML = """\
build_script: [make]
environment:
  matrix:
    - PY: "3.12"
for:
  - matrix:
      only:
        - PY: "3.12"
    branches:
      only: [main]
    install: [echo install]
"""


def test_the_type_names_each_field_of_a_stored_configuration_and_no_other() -> None:
    assert set(Configuration.__annotations__) == {*DEFAULTS, JOB_ITEMS}


def test_a_build_keeps_its_job_items_in_the_shape_the_type_names() -> None:
    configuration, _ = read_repository_file(JOB_ITEM_YML, "main")

    [item] = configuration["jobOverrides"]

    assert set(item) == set(JobOverride.__annotations__)
    assert (item["fields"]["installScripts"][0]["script"], item["filters"]["includeBranches"]) == (
        "echo install",
        [{"value": "main"}],
    )


def test_each_setting_a_runner_is_sent_has_the_type_the_job_spec_gives_it() -> None:
    stored = get_type_hints(Configuration)

    assert {key: stored.get(key) for key in JobConfiguration.__annotations__} == get_type_hints(JobConfiguration)
