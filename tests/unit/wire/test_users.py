"""A user's add and change bodies, and who a session acts for: no IO."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.members import Member, Notifications
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.users import NewUser, TeamMember
from chalicelib.errors import Invalid
from chalicelib.wire.sessions import caller_json, parse_sign_in
from chalicelib.wire.users import parse_collaborator, parse_new_user, parse_user_change

CHANGE = {"userId": 4, "fullName": "Ada", "email": "ada@example.com", "roleId": 2}


def test_a_new_user_is_read_with_the_password_asked_for() -> None:
    body = {"fullName": "Ada", "email": "ada@example.com", "roleId": 2, "password": "pw", "confirmPassword": "pw"}

    assert parse_new_user(body) == NewUser("Ada", "ada@example.com", 2, False, "pw", "pw")


def test_a_change_without_preferences_keeps_the_stored_ones_and_one_preference_sets_the_rest_to_all() -> None:
    assert parse_user_change(CHANGE).notifications is None
    assert parse_user_change({**CHANGE, "failedBuildNotification": "none"}).notifications == Notifications(
        failed_build="none"
    )


def test_a_collaborator_needs_a_role_id() -> None:
    assert parse_collaborator({"email": "bo@example.com", "roleId": 5}) == ("bo@example.com", 5)
    with pytest.raises(Invalid, match="roleId"):
        parse_collaborator({"email": "bo@example.com"})


def test_a_session_shows_who_it_acts_for_and_their_permissions_in_order() -> None:
    caller = Caller(1, "acme", 4, 2, "User", frozenset({"RunProjectBuild", "AddRole"}))
    member = Member(1, "acme", 4, "ada@example.com", "Ada", 2, False, True, datetime(2026, 1, 1, tzinfo=UTC))

    shown = caller_json(caller, TeamMember(member, "User"))

    assert (shown["email"], shown["roleName"], shown["isCollaborator"]) == ("ada@example.com", "User", True)
    assert shown["permissions"] == ["AddRole", "RunProjectBuild"]
    assert parse_sign_in({"email": "ada@example.com", "password": "pw"}) == ("ada@example.com", "pw", None)
