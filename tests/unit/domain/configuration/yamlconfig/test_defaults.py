"""The default project configuration: no IO."""

from __future__ import annotations

from chalicelib.domain.configuration.yamlconfig.defaults import DEFAULT_VERSION_FORMAT, default_configuration


def test_each_project_gets_its_own_copy_of_the_defaults() -> None:
    first = default_configuration()
    first["environmentVariables"].append({"name": "A"})
    first["idToken"] = True

    second = default_configuration()

    assert second["environmentVariables"] == [] and second["idToken"] is False
    assert DEFAULT_VERSION_FORMAT == "1.0.{build}"
