"""A project as the API shows it, its security descriptor and the settings PUT that changes it: no IO."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from chalicelib.core.projects import Project
from chalicelib.core.roles import Role
from chalicelib.errors import Invalid
from chalicelib.wire.project_settings import parse_role_rights, parse_settings_change
from chalicelib.wire.projects import project_json, security_descriptor

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ADMIN = Role(1, 1, "Administrator", True, frozenset(), NOW)
USER = Role(1, 2, "User", True, frozenset(), NOW)
PROJECT = Project(1, "acme", 3, "app", "app", "gitHub", "git", "acme/app", "hook", "1.0.{build}", {}, NOW)


def test_a_projects_password_is_never_shown_but_its_ssh_public_key_is() -> None:
    with_password = replace(
        PROJECT, repository_authentication="credentials", repository_username="ci", repository_password="token"
    )
    with_key = replace(PROJECT, repository_authentication="ssh", ssh_public_key="ssh-ed25519 AAAA")

    assert project_json(with_password, [])["repositoryUsername"] == "ci"
    assert "token" not in str(project_json(with_password, []))
    assert project_json(with_key, [])["sshPublicKey"] == "ssh-ed25519 AAAA"


def test_the_descriptor_shown_reads_back_as_the_restrictions_it_shows() -> None:
    restricted = {2: {"Delete": False, "RunBuild": True}}

    shown = security_descriptor(restricted, [ADMIN, USER])

    assert all(right["allowed"] for right in shown["roleAces"][0]["accessRights"])  # the administrator: every right
    assert parse_role_rights(shown, [ADMIN, USER]) == restricted


@pytest.mark.parametrize(
    ("ace", "message"),
    [
        ({"roleId": 9}, "names role 9, not a role of this account"),
        ({"roleId": 1, "accessRights": [{"name": "Delete", "allowed": False}]}, "Administrator role always has"),
        ({"roleId": 2, "accessRights": [{"name": "Deploy", "allowed": False}]}, "Unknown access right 'Deploy'"),
    ],
)
def test_a_descriptor_naming_another_role_or_right_or_restricting_administrators_is_refused(
    ace: dict[str, object], message: str
) -> None:
    with pytest.raises(Invalid, match=message):
        parse_role_rights({"roleAces": [ace]}, [ADMIN, USER])


def test_a_settings_change_is_private_unless_it_says_so_and_keeps_an_absent_schedule() -> None:
    change = parse_settings_change({"name": "app"}, [ADMIN, USER])
    public = parse_settings_change({"isPrivate": False, "scheduleCrontabExpression": None}, [ADMIN, USER])

    assert (change.is_private, change.schedule_crontab_expression) == (True, None)
    assert (public.is_private, public.schedule_crontab_expression) == (False, "")  # "" removes the schedule
