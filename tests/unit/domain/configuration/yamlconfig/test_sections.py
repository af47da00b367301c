"""Sections of appveyor.yml read from a table; a deploy: or notifications: item names its provider. No IO."""

from __future__ import annotations

import pytest

from chalicelib.domain.configuration.yamlconfig.sections import provider_settings
from chalicelib.errors import Invalid


def test_an_item_is_read_as_its_provider_and_all_its_settings() -> None:
    item = {"provider": "FTP", "host": "ftp.example.com"}

    assert provider_settings(item, "deploy[0]", "a mapping") == ("FTP", item)


@pytest.mark.parametrize(
    ("item", "message"),
    [({"host": "ftp.example.com"}, r"deploy\[0\]: a provider is required"), ("FTP", "a mapping")],
)
def test_an_item_without_a_provider_or_not_a_mapping_is_refused_naming_its_place(item: object, message: str) -> None:
    with pytest.raises(Invalid, match=message):
        provider_settings(item, "deploy[0]", "a mapping")
