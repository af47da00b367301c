"""A project's slug, made from its name for its URLs: no IO."""

from __future__ import annotations

import pytest

from chalicelib.domain.projects.projects import slugify


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Web App", "web-app"),
        ("  C++ / Rust: tools!  ", "c-rust-tools"),
        ("Ünïcode", "n-code"),
        ("***", "project"),  # nothing URL-safe left: a slug all the same
        ("a" * 59 + " b", "a" * 59),  # cut to 60 characters, without a dash left at the end
    ],
)
def test_a_slug_is_the_names_lower_case_words_joined_by_dashes(name: str, slug: str) -> None:
    assert slugify(name) == slug
