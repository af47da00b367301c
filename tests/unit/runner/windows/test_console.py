"""Decoding what Windows programs print, and environments whose names ignore case."""

from __future__ import annotations

from chalicelib.runner.windows.console import decode, merged, oem_encoding


def test_utf8_output_is_read_as_utf8_and_anything_else_in_the_oem_code_page() -> None:
    assert decode("héllo ✓".encode()) == "héllo ✓"
    assert decode("héllo".encode(oem_encoding())) == "héllo"  # cp437 where no Windows says otherwise


def test_merging_replaces_a_variable_written_in_another_case() -> None:
    assert merged({"Path": "a", "X": "1"}, [("PATH", "b"), ("y", "2")]) == {"X": "1", "PATH": "b", "y": "2"}
