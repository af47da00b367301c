"""Who may make a role grant what: nobody raises their own role, or grants what their role does not have. No IO."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.roles import Role
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.roles import may_set
from chalicelib.errors import Forbidden

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEPLOYERS = Role(1, 5, "Deployers", False, frozenset({"DeployToEnvironment"}), NOW)
MANAGER = Caller(1, "acme", 4, 3, "Managers", frozenset({"UpdateRoleDetails", "RunProjectBuild"}))


def test_a_manager_may_grant_what_their_own_role_has_and_keep_what_the_role_had() -> None:
    may_set(MANAGER, DEPLOYERS, {"DeployToEnvironment", "RunProjectBuild"})


def test_a_manager_may_not_grant_beyond_their_role_nor_change_the_role_they_are_in() -> None:
    with pytest.raises(Forbidden, match="cannot grant permissions your role does not have: AddUser"):
        may_set(MANAGER, DEPLOYERS, {"AddUser"})
    with pytest.raises(Forbidden, match="Only an Administrator can change the role you are in"):
        may_set(MANAGER, Role(1, 3, "Managers", False, MANAGER.permissions, NOW), set(MANAGER.permissions))


def test_an_administrator_may_grant_anything() -> None:
    administrator = Caller(1, "acme", 1, 1, "Administrator", frozenset(), is_administrator=True)

    may_set(administrator, DEPLOYERS, {"AddUser", "DeleteRole"})
