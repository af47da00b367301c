"""Decoding what Windows programs print, and environments whose names ignore case."""

from __future__ import annotations

from chalicelib.runner.windows.console import decode, merged, oem_encoding, variable


def test_utf8_output_is_read_as_utf8_and_anything_else_in_the_oem_code_page() -> None:
    assert decode("héllo ✓".encode()) == "héllo ✓"
    assert decode("héllo".encode(oem_encoding())) == "héllo"  # cp437 where no Windows says otherwise


def test_merging_replaces_a_variable_written_in_another_case() -> None:
    assert merged({"Path": "a", "X": "1"}, [("PATH", "b"), ("y", "2")]) == {"X": "1", "PATH": "b", "y": "2"}


def test_a_variable_is_found_whatever_the_case_of_its_name_and_the_default_stands_for_none() -> None:
    environment = {"Path": "C:\\Windows", "ComSpec": "C:\\Windows\\system32\\cmd.exe", "EMPTY": ""}

    assert variable(environment, "PATH") == "C:\\Windows"
    assert variable(environment, "comspec", "cmd.exe") == "C:\\Windows\\system32\\cmd.exe"
    assert variable(environment, "EMPTY", "default") == ""  # set, though empty: not the default
    assert variable(environment, "PATHEXT") is None
    assert variable(environment, "PATHEXT", ".EXE") == ".EXE"
