"""Credentials in a clone URL stored before they were refused: shown without them, and moved by the migration only
where they fit the fields (the cases here need no encryption: the move itself is tested in tests/functional)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from chalicelib.core.projects import Project
from chalicelib.core.repository_names import public_repository_name, without_credentials
from chalicelib.domain.forges.repository_credentials import migrated


def project(repository_name: str, **fields: Any) -> Project:
    stored = Project(
        account_id=1,
        account_name="acme",
        project_id=2,
        slug="app",
        name="app",
        repository_type="git",
        repository_scm="git",
        repository_name=repository_name,
        webhook_id="hook",
        version_format="1.0.{build}",
        configuration={},
        created=datetime(2024, 1, 1, tzinfo=UTC),
    )
    return replace(stored, **fields)


def test_a_url_is_shown_without_its_user_and_password() -> None:
    shown = public_repository_name(project("https://bot:t%40ken@git.example/app.git"))

    assert shown == "https://git.example/app.git"
    assert without_credentials("https://bot:t%40ken@git.example/app.git")[1:] == ("bot", "t@ken")


def test_an_ssh_url_keeps_its_user_which_is_no_secret() -> None:
    assert public_repository_name(project("ssh://git@git.example/app.git")) == "ssh://git@git.example/app.git"


def test_a_url_without_credentials_needs_no_migration() -> None:
    assert migrated(project("https://git.example/app.git")) is None


def test_a_token_as_user_or_a_password_alone_fits_no_field_and_stays_where_it_is_used() -> None:
    assert migrated(project("https://TOKEN@github.com/acme/app.git")) is None
    assert migrated(project("https://:TOKEN@dev.azure.example/acme/_git/app")) is None


def test_the_url_credentials_of_a_project_whose_fields_are_set_since_are_dropped() -> None:
    stale = project(
        "https://old:stale@git.example/app.git",
        repository_authentication="credentials",
        repository_username="bot",
        repository_password="cvy2:token",
    )

    after = migrated(stale)

    assert after is not None and after.repository_name == "https://git.example/app.git"
    assert (after.repository_username, after.repository_password) == ("bot", "cvy2:token")
