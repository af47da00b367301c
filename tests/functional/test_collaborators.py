"""Collaborators: people of other accounts (or new e-mail addresses) given a role in an account."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.api import collaborators as collaborator_views
from chalicelib.domain.team.auth import authenticate
from chalicelib.domain.team.collaborators import add_collaborator as give_role
from chalicelib.errors import Conflict
from tests.support import Account, Caller, Reply, assert_names_field, assert_refused, new_account, unique, view_answer

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00$")
LIST_FIELDS = {
    "accountId",
    "accountName",
    "isOwner",
    "isCollaborator",
    "userId",
    "fullName",
    "email",
    "roleId",
    "roleName",
    "successfulBuildNotification",
    "failedBuildNotification",
    "notifyWhenBuildStatusChangedOnly",
    "created",
}
DEPLOYMENT_FIELDS = {"successfulDeploymentNotification", "failedDeploymentNotification"}
ROLE_SUMMARY_FIELDS = {"roleId", "name", "isSystem", "created"}


def email(prefix: str = "user") -> str:
    return f"{unique(prefix)}@team.example"


def collaborators(account: Account) -> list[dict[str, Any]]:
    reply = account.api.get("/collaborators")
    assert reply.status == 200, reply.body
    return reply.json


def users(account: Account) -> list[dict[str, Any]]:
    reply = account.api.get("/users")
    assert reply.status == 200, reply.body
    return reply.json


def owner(account: Account) -> dict[str, Any]:
    return next(user for user in users(account) if user["isOwner"])


def add_collaborator(account: Account, address: str, role_id: int) -> dict[str, Any]:
    """Add a collaborator through the API and return it as the collaborator list shows it."""
    reply = account.api.post("/collaborators", {"email": address, "roleId": role_id})
    assert_done(reply)
    return next(entry for entry in collaborators(account) if entry["email"] == address)


def under_prefix(account: Account, key: str) -> Caller:
    """A caller acting on ``account`` through ``/api/account/{name}`` with ``key``."""
    return Caller(account.client, key, f"/api/account/{account.name}")


def team_state(account: Account) -> dict[str, Any]:
    """What the users, collaborators and roles endpoints show of an account."""
    return {"users": users(account), "collaborators": collaborators(account), "roles": account.api.get("/roles").json}


def assert_done(reply: Reply) -> None:
    assert reply.status == 204, reply.body
    assert reply.body in (b"", None), reply.body


@dataclass
class Team:
    """An account with a custom role, a user and a collaborator (the owner of ``home``), shared by the
    tests that only read or whose requests are refused (which they check)."""

    account: Account
    home: Account
    role: dict[str, Any]
    member: dict[str, Any]
    collaborator: dict[str, Any]
    user_role_id: int


@pytest.fixture(scope="module")
def team(client: Client) -> Team:
    account, home = new_account(client), new_account(client)
    role = account.add_role("Deployers")
    member = account.add_user(email(), full_name="Member Example")
    collaborator = add_collaborator(account, home.owner_email, role["roleId"])
    return Team(account, home, role, member, collaborator, account.role_id("User"))


# Adding and listing collaborators


def test_an_added_collaborator_is_listed_as_a_collaborator_and_not_as_a_user(
    account: Account, other_account: Account
) -> None:
    role = account.add_role("Deployers")
    own_users = users(account)
    assert collaborators(account) == []

    assert_done(account.api.post("/collaborators", {"email": other_account.owner_email, "roleId": role["roleId"]}))

    listed = collaborators(account)
    assert len(listed) == 1
    entry = listed[0]
    assert set(entry) == LIST_FIELDS
    assert (entry["isCollaborator"], entry["isOwner"]) == (True, False)
    assert entry["email"] == other_account.owner_email
    assert (entry["roleId"], entry["roleName"]) == (role["roleId"], "Deployers")
    assert (entry["accountId"], entry["accountName"]) == (own_users[0]["accountId"], account.name)
    assert (entry["successfulBuildNotification"], entry["failedBuildNotification"]) == ("all", "all")
    assert entry["notifyWhenBuildStatusChangedOnly"] is False
    assert TIMESTAMP.match(entry["created"]), entry["created"]
    assert users(account) == own_users


def test_a_collaborator_keeps_the_user_id_and_name_they_have_in_their_own_account(
    account: Account, other_account: Account
) -> None:
    their_user = other_account.add_user(email(), full_name="Casey Collaborator")
    their_owner = owner(other_account)
    user_role = account.role_id("User")

    as_user = add_collaborator(account, their_user["email"], user_role)
    as_owner = add_collaborator(account, other_account.owner_email, user_role)

    assert (as_user["userId"], as_user["fullName"]) == (their_user["userId"], "Casey Collaborator")
    assert (as_owner["userId"], as_owner["fullName"]) == (their_owner["userId"], their_owner["fullName"])
    assert {entry["userId"] for entry in collaborators(account)} == {their_user["userId"], their_owner["userId"]}


def test_a_collaborators_email_is_recognised_in_any_case(account: Account, other_account: Account) -> None:
    their_owner = owner(other_account)

    assert_done(
        account.api.post(
            "/collaborators",
            {
                "email": f" {other_account.owner_email.upper()}",
                "roleId": account.role_id("User"),
            },
        )
    )

    [entry] = collaborators(account)
    assert (entry["userId"], entry["fullName"]) == (their_owner["userId"], their_owner["fullName"])
    assert entry["email"].lower() == other_account.owner_email
    assert view_answer(account, collaborator_views.list_collaborators, "/api/collaborators") == [entry]
    with pytest.raises(Conflict, match="already a member of this account"):  # in yet another case
        give_role(authenticate(f"Bearer {account.key}", None), other_account.owner_email.title(), entry["roleId"])


def test_an_unknown_email_becomes_a_collaborator_with_a_new_user_id(account: Account, other_account: Account) -> None:
    address = email("stranger")
    taken_ids = {user["userId"] for each in (account, other_account) for user in users(each)}
    taken_ids |= {role["roleId"] for each in (account, other_account) for role in each.api.get("/roles").json}

    entry = add_collaborator(account, address, account.role_id("User"))

    assert isinstance(entry["userId"], int) and entry["userId"] not in taken_ids
    assert (entry["email"], entry["isCollaborator"], entry["roleName"]) == (address, True, "User")
    assert account.api.get(f"/collaborators/{entry['userId']}").json["user"]["email"] == address


def test_a_person_collaborates_in_several_accounts_under_one_user_id(
    account: Account, other_account: Account, client: Client
) -> None:
    third = new_account(client)
    their_id = owner(other_account)["userId"]

    in_account = add_collaborator(account, other_account.owner_email, account.role_id("User"))
    in_third = add_collaborator(third, other_account.owner_email, third.role_id("Administrator"))

    assert in_account["userId"] == in_third["userId"] == their_id
    assert (in_account["accountName"], in_third["accountName"]) == (account.name, third.name)
    assert (in_account["roleName"], in_third["roleName"]) == ("User", "Administrator")


# Getting one collaborator


def test_getting_a_collaborator_shows_the_deployment_preferences_and_every_role_of_the_account(team: Team) -> None:
    reply = team.account.api.get(f"/collaborators/{team.collaborator['userId']}")

    assert reply.status == 200, reply.body
    assert set(reply.json) == {"user", "roles"}
    user = reply.json["user"]
    assert set(user) == LIST_FIELDS | DEPLOYMENT_FIELDS
    assert {name: user[name] for name in LIST_FIELDS} == team.collaborator
    assert (user["successfulDeploymentNotification"], user["failedDeploymentNotification"]) == ("all", "all")
    assert [role["name"] for role in reply.json["roles"]] == ["Administrator", "User", "Deployers"]
    assert reply.json["roles"] == team.account.api.get("/roles").json
    assert all(set(role) - {"updated"} == ROLE_SUMMARY_FIELDS for role in reply.json["roles"])  # no groups


@pytest.mark.parametrize("who", ["unknown", "not a number", "owner", "user", "role"])
def test_getting_someone_who_is_not_a_collaborator_is_not_found(team: Team, who: str) -> None:
    user_id = {
        "unknown": 99999999999,
        "not a number": "abc",
        "owner": owner(team.account)["userId"],
        "user": team.member["userId"],
        "role": team.role["roleId"],
    }[who]

    assert_refused(team.account.api.get(f"/collaborators/{user_id}"), 404)


# Refused additions


@pytest.mark.parametrize("taken", ["owner", "owner in capitals", "user", "collaborator", "collaborator in capitals"])
def test_adding_a_collaborator_whose_email_is_already_in_the_account_is_a_conflict(team: Team, taken: str) -> None:
    address = {
        "owner": team.account.owner_email,
        "owner in capitals": team.account.owner_email.upper(),
        "user": team.member["email"],
        "collaborator": team.collaborator["email"],
        "collaborator in capitals": team.collaborator["email"].upper(),
    }[taken]
    before = team_state(team.account)

    reply = team.account.api.post("/collaborators", {"email": address, "roleId": team.user_role_id})

    assert_refused(reply, 409)
    assert team_state(team.account) == before


@pytest.mark.parametrize("role", ["unknown", "another account's", "a user's id"])
def test_adding_a_collaborator_with_a_role_the_account_does_not_have_is_refused(team: Team, role: str) -> None:
    role_id = {
        "unknown": 99999999999,
        "another account's": team.home.role_id("User"),
        "a user's id": team.member["userId"],
    }[role]
    before = team_state(team.account)

    reply = team.account.api.post("/collaborators", {"email": email(), "roleId": role_id})

    assert_names_field(reply, "roleId")
    assert team_state(team.account) == before


MISSING = object()
BAD_ADDITIONS: dict[str, tuple[str, Any]] = {
    "no email": ("email", MISSING),
    "null email": ("email", None),
    "email a number": ("email", 5),
    "email without @": ("email", "plainaddress"),
    "email with a space": ("email", "with space@team.example"),
    "no roleId": ("roleId", MISSING),
    "roleId text": ("roleId", "abc"),
}


@pytest.mark.parametrize("case", BAD_ADDITIONS.values(), ids=BAD_ADDITIONS.keys())
def test_adding_a_collaborator_with_a_missing_or_malformed_field_is_refused_naming_it(
    team: Team, case: tuple[str, Any]
) -> None:
    field, value = case
    body = {"email": email(), "roleId": team.user_role_id, field: value}
    if value is MISSING:
        del body[field]
    before = team_state(team.account)

    reply = team.account.api.post("/collaborators", body)

    assert_names_field(reply, field)
    assert team_state(team.account) == before


# Updating collaborators


def test_updating_a_collaborator_changes_its_role_and_marks_it_updated(
    account: Account, other_account: Account
) -> None:
    role = account.add_role("Deployers")
    added = add_collaborator(account, other_account.owner_email, account.role_id("User"))

    assert_done(account.api.put("/collaborators", {"userId": added["userId"], "roleId": role["roleId"]}))

    [listed] = collaborators(account)
    assert (listed["userId"], listed["roleId"], listed["roleName"]) == (added["userId"], role["roleId"], "Deployers")
    assert listed["created"] == added["created"]
    assert TIMESTAMP.match(listed["updated"]), listed["updated"]
    assert listed["updated"] >= listed["created"]
    assert set(listed) == LIST_FIELDS | {"updated"}
    shown = account.api.get(f"/collaborators/{added['userId']}").json["user"]
    assert (shown["roleName"], shown["updated"]) == ("Deployers", listed["updated"])
    assert [user["email"] for user in users(account)] == [account.owner_email]


@pytest.mark.parametrize("role", ["unknown", "another account's"])
def test_updating_a_collaborator_to_a_role_the_account_does_not_have_is_refused(team: Team, role: str) -> None:
    role_id = 99999999999 if role == "unknown" else team.home.role_id("Administrator")
    before = team_state(team.account)

    reply = team.account.api.put("/collaborators", {"userId": team.collaborator["userId"], "roleId": role_id})

    assert_names_field(reply, "roleId")
    assert team_state(team.account) == before


@pytest.mark.parametrize("who", ["unknown", "owner", "user", "role"])
def test_updating_someone_who_is_not_a_collaborator_is_not_found(team: Team, who: str) -> None:
    user_id = {
        "unknown": 99999999999,
        "owner": owner(team.account)["userId"],
        "user": team.member["userId"],
        "role": team.role["roleId"],
    }[who]
    before = team_state(team.account)

    reply = team.account.api.put("/collaborators", {"userId": user_id, "roleId": team.role["roleId"]})

    assert_refused(reply, 404)
    assert team_state(team.account) == before


@pytest.mark.parametrize("field", ["userId", "roleId"])
def test_updating_a_collaborator_without_a_required_field_is_refused_naming_it(team: Team, field: str) -> None:
    body = {"userId": team.collaborator["userId"], "roleId": team.user_role_id}
    del body[field]
    before = team_state(team.account)

    reply = team.account.api.put("/collaborators", body)

    assert_names_field(reply, field)
    assert team_state(team.account) == before


# Deleting collaborators


def test_deleting_a_collaborator_removes_only_their_access_and_they_can_be_added_again(
    account: Account, other_account: Account
) -> None:
    added = add_collaborator(account, other_account.owner_email, account.role_id("User"))
    home_before = team_state(other_account)

    assert_done(account.api.delete(f"/collaborators/{added['userId']}"))

    assert collaborators(account) == []
    assert_refused(account.api.get(f"/collaborators/{added['userId']}"), 404)
    assert_refused(account.api.delete(f"/collaborators/{added['userId']}"), 404)
    assert [user["email"] for user in users(account)] == [account.owner_email]
    assert team_state(other_account) == home_before
    again = add_collaborator(account, other_account.owner_email, account.role_id("Administrator"))
    assert (again["userId"], again["roleName"]) == (added["userId"], "Administrator")


@pytest.mark.parametrize("who", ["unknown", "not a number", "owner", "user", "role"])
def test_deleting_someone_who_is_not_a_collaborator_is_not_found(team: Team, who: str) -> None:
    user_id = {
        "unknown": 99999999999,
        "not a number": "abc",
        "owner": owner(team.account)["userId"],
        "user": team.member["userId"],
        "role": team.role["roleId"],
    }[who]
    before = team_state(team.account)

    reply = team.account.api.delete(f"/collaborators/{user_id}")

    assert_refused(reply, 404)
    assert team_state(team.account) == before


# What a collaborator can do in the account


def test_a_collaborator_works_in_the_account_with_their_user_level_key_until_removed(
    account: Account, other_account: Account
) -> None:
    user_level_key = other_account.caller_for(other_account.owner_email, user_level=True).key
    in_account = under_prefix(account, user_level_key)
    assert_refused(in_account.get("/users"), 404)
    added = add_collaborator(account, other_account.owner_email, account.role_id("User"))

    reply = in_account.get("/users")
    assert reply.status == 200, reply.body
    assert reply.json == users(account)
    assert in_account.get("/collaborators").json == collaborators(account)
    assert_refused(
        in_account.post(
            "/users",
            {
                "fullName": "Not Allowed",
                "email": email(),
                "roleId": account.role_id("User"),
                "generatePassword": True,
            },
        ),
        403,
    )

    to_administrator = {"userId": added["userId"], "roleId": account.role_id("Administrator")}
    assert_done(account.api.put("/collaborators", to_administrator))
    address = email()
    assert_done(
        in_account.post(
            "/users",
            {
                "fullName": "Added By Collaborator",
                "email": address,
                "roleId": account.role_id("User"),
                "generatePassword": True,
            },
        )
    )
    assert address in [user["email"] for user in users(account)]
    assert address not in [user["email"] for user in users(other_account)]

    assert_done(account.api.delete(f"/collaborators/{added['userId']}"))
    assert_refused(in_account.get("/users"), 404)
    assert_refused(in_account.get("/collaborators"), 404)
    assert under_prefix(other_account, user_level_key).get("/users").json == users(other_account)


def test_a_collaborators_own_account_key_does_not_act_on_the_account(team: Team) -> None:
    before = team_state(team.account)

    assert_refused(under_prefix(team.account, team.home.key).get("/users"), 404)
    assert_refused(
        under_prefix(team.account, team.home.key).post(
            "/collaborators", {"email": email(), "roleId": team.user_role_id}
        ),
        404,
    )
    own = team.home.api.get("/users")
    assert [user["email"] for user in own.json] == [team.home.owner_email]

    assert team_state(team.account) == before


# Who may change collaborators


def test_a_user_with_the_built_in_user_role_can_read_collaborators_but_not_change_them(team: Team) -> None:
    caller = team.account.caller_for(team.member["email"])
    collaborator_id = team.collaborator["userId"]
    before = team_state(team.account)

    assert caller.get("/collaborators").json == before["collaborators"]
    assert (
        caller.get(f"/collaborators/{collaborator_id}").json
        == team.account.api.get(f"/collaborators/{collaborator_id}").json
    )
    assert_refused(caller.post("/collaborators", {"email": email(), "roleId": team.user_role_id}), 403)
    assert_refused(caller.put("/collaborators", {"userId": collaborator_id, "roleId": team.user_role_id}), 403)
    assert_refused(caller.delete(f"/collaborators/{collaborator_id}"), 403)

    assert team_state(team.account) == before


@pytest.mark.parametrize("granted", ["AddUser", "UpdateUserDetails", "DeleteUser"])
def test_a_custom_role_allows_exactly_the_collaborator_changes_it_grants(account: Account, granted: str) -> None:
    account.add_role("User keepers", {granted})
    keeper = account.add_user(email(), role="User keepers")
    caller = account.caller_for(keeper["email"])
    target = add_collaborator(account, email("target"), account.role_id("User"))
    address = email("added")

    added = caller.post("/collaborators", {"email": address, "roleId": account.role_id("User")})
    # a role it holds itself: giving Administrator is an Administrator's alone (test_users.py, "Taking the account")
    updated = caller.put("/collaborators", {"userId": target["userId"], "roleId": account.role_id("User keepers")})
    deleted = caller.delete(f"/collaborators/{target['userId']}")

    assert added.status == (204 if granted == "AddUser" else 403), added.body
    assert updated.status == (204 if granted == "UpdateUserDetails" else 403), updated.body
    assert deleted.status == (204 if granted == "DeleteUser" else 403), deleted.body
    for reply in (added, updated, deleted):
        if reply.status == 403:
            assert_refused(reply, 403)
    listed = {entry["email"]: entry for entry in collaborators(account)}
    assert (address in listed) == (granted == "AddUser")
    assert (target["email"] in listed) == (granted != "DeleteUser")
    if granted != "DeleteUser":
        expected = "User keepers" if granted == "UpdateUserDetails" else "User"
        assert listed[target["email"]]["roleName"] == expected
