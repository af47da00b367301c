"""Named values of appveyor.yml (environment variables, matrix rows), plain or secure: no IO."""

from __future__ import annotations

import pytest

from chalicelib.domain.configuration.yamlconfig.scalars import Plain
from chalicelib.domain.configuration.yamlconfig.variables import (
    read_stored_value,
    read_variables,
    write_stored_value,
    write_variables,
)
from chalicelib.errors import Invalid


def test_a_secure_value_is_stored_encrypted_and_written_back_as_it_was() -> None:
    stored = read_stored_value({"secure": "c2VjcmV0"}, "environment.TOKEN")

    assert stored == {"isEncrypted": True, "value": "c2VjcmV0"}
    assert write_stored_value(stored) == {"secure": "c2VjcmV0"}


def test_an_empty_value_has_no_value_and_is_written_as_null() -> None:
    assert read_stored_value(None, "environment.EMPTY") == {"isEncrypted": False}
    assert write_stored_value({"isEncrypted": False}) is None


@pytest.mark.parametrize("value", [{"secure": "x", "other": 1}, ["a", "b"]])
def test_a_value_of_another_shape_is_refused_naming_its_path(value: object) -> None:
    with pytest.raises(Invalid, match=r"environment\.TOKEN: expected a value or \{secure: <encrypted text>\}"):
        read_stored_value(value, "environment.TOKEN")


def test_variables_keep_their_file_order_and_write_back_as_a_mapping() -> None:
    variables = read_variables({"B": "2", "A": "1"}, "environment")

    assert [variable["name"] for variable in variables] == ["B", "A"]
    assert write_variables(variables) == {Plain("B"): Plain("2"), Plain("A"): Plain("1")}
