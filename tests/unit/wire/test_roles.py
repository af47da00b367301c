"""A role as the API shows it, every permission in its group, and a full-role update's body: no IO."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.roles import Role
from chalicelib.domain.team.permissions import Permission
from chalicelib.errors import Invalid
from chalicelib.wire.roles import parse_role_update, role_details, role_summary

ROLE = Role(1, 3, "Deployer", False, frozenset({"DeployToEnvironment"}), datetime(2026, 1, 1, tzinfo=UTC))


def test_a_roles_details_say_of_each_permission_whether_it_is_allowed() -> None:
    details = role_details(ROLE)
    allowed = {p["name"]: p["allowed"] for group in details["groups"] for p in group["permissions"]}

    assert allowed[Permission.DEPLOY_TO_ENVIRONMENT.value] is True
    assert not any(value for name, value in allowed.items() if name != Permission.DEPLOY_TO_ENVIRONMENT.value)
    assert role_summary(ROLE).items() <= details.items()
    assert "groups" not in role_summary(ROLE)


def test_an_update_reads_the_permissions_allowed_in_their_groups() -> None:
    body = role_details(ROLE) | {"name": "Releaser"}
    body["groups"][0]["permissions"][2]["allowed"] = True  # Projects: run builds

    role_id, name, allowed = parse_role_update(body)

    assert (role_id, name) == (3, "Releaser")
    assert allowed == {Permission.DEPLOY_TO_ENVIRONMENT, Permission.RUN_PROJECT_BUILD}


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([{"name": "Billing", "permissions": []}], "Unknown permission group 'Billing'"),
        ([{"name": "Roles", "permissions": [{"name": "AddUser", "allowed": True}]}], "Unknown permission 'AddUser'"),
    ],
)
def test_an_unknown_group_or_a_permission_in_the_wrong_group_is_refused(groups: object, message: str) -> None:
    with pytest.raises(Invalid, match=message):
        parse_role_update({"roleId": 3, "name": "Releaser", "groups": groups})
