"""Which build number a project's version format gives a version: what UpdateBuild -Version may not take."""

from __future__ import annotations

import pytest

from chalicelib.domain.configuration.matrix import build_version, version_build_number


@pytest.mark.parametrize(
    ("version_format", "version", "number"),
    [
        ("1.0.{build}", "1.0.17", 17),
        ("1.0.{build}", "1.0.017", None),  # no build's version is written so
        ("1.0.{build}", "2.0.17", None),
        ("v{build}", "V3", 3),  # versions are unique whatever their case
        ("1.0.{build}-{branch}", "1.0.5-feature/x", 5),  # any branch's build
        ("{build}.{build}", "3.3", 3),
        ("{build}.{build}", "3.4", None),
        ("{branch}{branch}{branch}.{build}", "a.b.c.4", None),  # not looked into
    ],
)
def test_the_number_a_format_gives_a_version(version_format: str, version: str, number: int | None) -> None:
    assert version_build_number(version_format, version) == number


def test_every_version_a_format_makes_gives_its_number_back() -> None:
    for number in (1, 9, 10, 12345):
        assert (
            version_build_number("1.{build}.0-{branch}", build_version("1.{build}.0-{branch}", number, "main"))
            == number
        )
