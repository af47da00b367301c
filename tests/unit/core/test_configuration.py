"""The configuration's type names every field domain/configuration/ stores, and types the settings a runner is
sent as the job spec does: mypy checks each value read by key against it, and each key read by name is one of its
fields (mypy lets ``.get`` name a key a TypedDict lacks: read here from the source instead)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_type_hints

import chalicelib
from chalicelib.core.configuration import Configuration, JobOverride
from chalicelib.domain.configuration.yamlconfig import read_repository_file
from chalicelib.domain.configuration.yamlconfig.defaults import DEFAULTS
from chalicelib.domain.configuration.yamlconfig.for_items import JOB_ITEMS
from chalicelib.protocol.job_spec import JobConfiguration

# what the service calls a configuration where it reads one by key (``c``: unhonoured.py's checks)
HOLDERS = {"configuration", "job_config", "cfg", "c"}
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


def _holder(node: ast.expr) -> str | None:
    """The name a read is made on: ``configuration``, ``build.configuration``, ``job_configuration(...)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return "configuration" if node.func.id == "job_configuration" else None
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def keys_read(source: str) -> set[str]:
    """The keys ``source`` reads of a configuration by name: ``configuration["x"]``, ``cfg.get("x")``, ``.pop``."""
    read = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and _holder(node.value) in HOLDERS:
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and _holder(node.func.value) in HOLDERS
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            read.add(key.value)
    return read


def test_each_key_the_service_reads_of_a_configuration_is_a_field_of_its_type() -> None:
    service = [path for path in Path(chalicelib.__file__).parent.rglob("*.py") if "runner" not in path.parts]
    read = {key: str(path) for path in service for key in keys_read(path.read_text())}

    assert {"deployMode", "maxJobs", "idToken", "skipTags", "environmentVariables"} <= set(read)  # the walk reads
    assert {key: where for key, where in read.items() if key not in Configuration.__annotations__} == {}


def test_a_key_read_that_the_type_lacks_is_found() -> None:
    source = 'def f(build):\n    return build.configuration.get("deployMod") or job_configuration(b, s)["maxJob"]\n'

    assert keys_read(source) == {"deployMod", "maxJob"}
