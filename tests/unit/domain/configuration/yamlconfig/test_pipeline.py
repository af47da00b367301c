"""The modes of appveyor.yml's build, test and deploy phases: no IO."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.configuration.yamlconfig.pipeline import modes_written, read_modes


def modes(document: dict[str, Any]) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    read_modes(document, cfg)
    return cfg


def test_phases_not_named_keep_appveyors_defaults() -> None:
    assert modes({}) == {"buildMode": "msbuild", "testMode": "auto", "deployMode": "providers"}


def test_off_switches_a_phase_off_and_a_script_key_even_empty_selects_the_script_mode() -> None:
    assert modes({"build": "off", "test_script": [], "deploy": "off"}) == {
        "buildMode": "none",
        "testMode": "script",
        "deployMode": "none",
    }
    assert modes({"build": "Script"})["buildMode"] == "script"  # the settings' Build tab word, any case


def test_a_for_item_changes_only_the_modes_of_the_phases_it_names() -> None:
    assert modes_written({"test": "off"}) == {"testMode": "none"}
    assert modes_written({"environment": {"A": "1"}}) == {}
