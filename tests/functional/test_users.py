"""Users of an account: listing, reading, adding, changing and removing them, and who may do which."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.api import users as user_views
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
PASSWORD = "Corr3ct-Horse-Battery"


def email() -> str:
    return f"{unique('user')}@team.example"


_built_in_role_ids: dict[tuple[str, str], int] = {}


def built_in_role_id(account: Account, role: str) -> int:
    """The id of a built-in role, which never changes (so asked for once per account)."""
    if (account.name, role) not in _built_in_role_ids:
        _built_in_role_ids[account.name, role] = account.role_id(role)
    return _built_in_role_ids[account.name, role]


def new_user_body(account: Account, **changes: Any) -> dict[str, Any]:
    """A valid POST /users body (a fresh e-mail, the User role, a password given twice), with ``changes``."""
    body = {
        "fullName": "Pat Example",
        "email": email(),
        "roleId": built_in_role_id(account, "User"),
        "generatePassword": False,
        "password": PASSWORD,
        "confirmPassword": PASSWORD,
    }
    return {**body, **changes}


def users(account: Account) -> list[dict[str, Any]]:
    reply = account.api.get("/users")
    assert reply.status == 200, reply.body
    return reply.json


def user_by_email(account: Account, address: str) -> dict[str, Any]:
    return next(user for user in users(account) if user["email"] == address)


def owner(account: Account) -> dict[str, Any]:
    return next(user for user in users(account) if user["isOwner"])


def full_user(account: Account, user_id: int) -> dict[str, Any]:
    reply = account.api.get(f"/users/{user_id}")
    assert reply.status == 200, reply.body
    return reply.json["user"]


def user_change(account: Account, user_id: int, **changes: Any) -> dict[str, Any]:
    """The full PUT /users body that keeps the user as it is apart from ``changes``."""
    user = full_user(account, user_id)
    kept = {
        name: user[name]
        for name in (
            "userId",
            "fullName",
            "email",
            "roleId",
            "successfulBuildNotification",
            "failedBuildNotification",
            "notifyWhenBuildStatusChangedOnly",
            "successfulDeploymentNotification",
            "failedDeploymentNotification",
        )
    }
    return {**kept, "password": None, **changes}


def add_collaborator(account: Account, address: str, role: str = "User") -> dict[str, Any]:
    reply = account.api.post("/collaborators", {"email": address, "roleId": account.role_id(role)})
    assert reply.status == 204, reply.body
    return next(entry for entry in account.api.get("/collaborators").json if entry["email"] == address)


def team_state(account: Account) -> dict[str, Any]:
    """What the users and collaborators endpoints show of an account."""
    return {"users": users(account), "collaborators": account.api.get("/collaborators").json}


def assert_done(reply: Reply) -> None:
    assert reply.status == 204, reply.body
    assert reply.body in (b"", None), reply.body


@dataclass
class Team:
    """An account shared by tests that only read or whose requests are refused (which they check)."""

    account: Account
    role: dict[str, Any]
    member: dict[str, Any]
    collaborator: dict[str, Any]


@pytest.fixture(scope="module")
def team(client: Client) -> Team:
    account = new_account(client)
    role = account.add_role("Deployers")
    member = account.add_user(email(), full_name="Member Example")
    collaborator = add_collaborator(account, new_account(client).owner_email)
    return Team(account, role, member, collaborator)


# Listing users


def test_a_new_account_lists_its_owner_as_its_only_user(account: Account) -> None:
    listed = users(account)

    assert len(listed) == 1
    user = listed[0]
    assert set(user) == LIST_FIELDS
    assert user["email"] == account.owner_email
    assert user["accountName"] == account.name
    assert isinstance(user["accountId"], int) and isinstance(user["userId"], int)
    assert (user["isOwner"], user["isCollaborator"]) == (True, False)
    assert (user["roleId"], user["roleName"]) == (account.role_id("Administrator"), "Administrator")
    assert (user["successfulBuildNotification"], user["failedBuildNotification"]) == ("all", "all")
    assert user["notifyWhenBuildStatusChangedOnly"] is False
    assert TIMESTAMP.match(user["created"]), user["created"]
    assert view_answer(account, user_views.list_users, "/api/users") == listed  # the view GET /users runs


def test_added_users_are_listed_after_the_owner_in_the_order_added(account: Account) -> None:
    account.add_role("Deployers")
    first, second = email(), email()
    account.add_user(first, full_name="First Example")
    account.add_user(second, role="Deployers", full_name="Second Example")

    listed = users(account)

    assert [user["email"] for user in listed] == [account.owner_email, first, second]
    assert [(user["fullName"], user["roleName"]) for user in listed[1:]] == [
        ("First Example", "User"),
        ("Second Example", "Deployers"),
    ]
    assert listed[2]["roleId"] == account.role_id("Deployers")
    for user in listed[1:]:
        assert set(user) == LIST_FIELDS
        assert (user["isOwner"], user["isCollaborator"]) == (False, False)
        assert (user["accountId"], user["accountName"]) == (listed[0]["accountId"], account.name)
        assert TIMESTAMP.match(user["created"]), user["created"]
    assert len({user["userId"] for user in listed}) == 3


def test_collaborators_are_not_listed_as_users(team: Team) -> None:
    listed = users(team.account)

    assert [user["email"] for user in listed] == [team.account.owner_email, team.member["email"]]
    assert team.collaborator["userId"] not in {user["userId"] for user in listed}
    assert not any(user["isCollaborator"] for user in listed)
    assert team.collaborator in team.account.api.get("/collaborators").json


# Getting one user


def test_getting_a_user_shows_the_deployment_preferences_and_the_built_in_roles(team: Team) -> None:
    reply = team.account.api.get(f"/users/{team.member['userId']}")

    assert reply.status == 200, reply.body
    assert set(reply.json) == {"user", "roles"}
    user = reply.json["user"]
    assert set(user) == LIST_FIELDS | DEPLOYMENT_FIELDS
    assert {name: user[name] for name in LIST_FIELDS} == team.member
    assert (user["successfulDeploymentNotification"], user["failedDeploymentNotification"]) == ("all", "all")
    built_in = [role for role in team.account.api.get("/roles").json if role["isSystem"]]
    assert [role["name"] for role in reply.json["roles"]] == ["Administrator", "User"]
    assert reply.json["roles"] == built_in
    assert all(set(role) == ROLE_SUMMARY_FIELDS for role in reply.json["roles"])


def test_getting_the_owner_shows_it_as_the_owner(team: Team) -> None:
    listed = owner(team.account)

    user = full_user(team.account, listed["userId"])

    assert {name: user[name] for name in LIST_FIELDS} == listed
    assert user["isOwner"] is True


@pytest.mark.parametrize("user_id", ["99999999999", "abc", "-1", "1.5"])
def test_getting_an_unknown_user_is_not_found(team: Team, user_id: str) -> None:
    assert_refused(team.account.api.get(f"/users/{user_id}"), 404)


def test_a_collaborator_is_not_found_under_the_users_path(team: Team) -> None:
    assert_refused(team.account.api.get(f"/users/{team.collaborator['userId']}"), 404)


@pytest.mark.parametrize("role", ["Deployers", "Administrator", "User"])
def test_a_role_id_under_the_users_path_shows_the_role_with_its_groups(team: Team, role: str) -> None:
    role_id = team.account.role_id(role)

    reply = team.account.api.get(f"/users/{role_id}")

    assert reply.status == 200, reply.body
    assert reply.json["name"] == role and reply.json["roleId"] == role_id
    assert [group["name"] for group in reply.json["groups"]] == [
        "Projects",
        "Environments",
        "Account",
        "Users",
        "Roles",
        "User",
    ]
    assert reply.json == team.account.api.get(f"/roles/{role_id}").json


# Adding users


def test_adding_a_user_with_a_password_given_twice_lists_it(account: Account) -> None:
    role = account.add_role("Deployers")
    body = new_user_body(
        account, fullName="Pat Example", roleId=role["roleId"], password="8 chars!", confirmPassword="8 chars!"
    )

    assert_done(account.api.post("/users", body))

    user = user_by_email(account, body["email"])
    assert (user["fullName"], user["roleId"], user["roleName"]) == ("Pat Example", role["roleId"], "Deployers")
    assert (user["isOwner"], user["isCollaborator"]) == (False, False)
    assert "updated" not in user
    assert full_user(account, user["userId"])["email"] == body["email"]


def test_adding_a_user_with_a_generated_password_needs_no_password(account: Account) -> None:
    address = email()
    reply = account.api.post(
        "/users",
        {
            "fullName": "Gen Example",
            "email": address,
            "roleId": account.role_id("User"),
            "generatePassword": True,
        },
    )

    assert_done(reply)
    assert user_by_email(account, address)["fullName"] == "Gen Example"


def test_the_same_email_can_be_a_user_of_two_accounts(account: Account, other_account: Account) -> None:
    address = email()
    account.add_user(address)

    assert_done(other_account.api.post("/users", new_user_body(other_account, email=address)))

    assert address in [user["email"] for user in users(other_account)]
    assert address in [user["email"] for user in users(account)]


@pytest.mark.parametrize("field", ["fullName", "email", "roleId"])
def test_adding_a_user_without_a_required_field_is_refused_naming_it(team: Team, field: str) -> None:
    body = new_user_body(team.account)
    del body[field]
    before = users(team.account)

    reply = team.account.api.post("/users", body)

    assert_names_field(reply, field)
    assert users(team.account) == before


WRONG_TYPES: dict[str, tuple[str, Any]] = {
    "fullName number": ("fullName", 5),
    "email number": ("email", 5),
    "email null": ("email", None),
    "roleId text": ("roleId", "abc"),
    "roleId fraction": ("roleId", 1.5),
    "generatePassword text": ("generatePassword", "yes"),
    "password number": ("password", 12345678),
    "confirmPassword number": ("confirmPassword", 12345678),
}


@pytest.mark.parametrize("case", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
def test_adding_a_user_with_a_field_of_the_wrong_type_is_refused_naming_it(team: Team, case: tuple[str, Any]) -> None:
    field, value = case
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, **{field: value}))

    assert_names_field(reply, field)
    assert users(team.account) == before


@pytest.mark.parametrize(
    "address",
    ["plainaddress", "no-domain@", "@no-local.example", "with space@team.example", "x" * 250 + "@team.example"],
    ids=repr,
)
def test_adding_a_user_with_an_invalid_email_is_refused(team: Team, address: str) -> None:
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, email=address))

    assert_names_field(reply, "email")
    assert users(team.account) == before


@pytest.mark.parametrize("taken", ["owner", "owner in capitals", "member with spaces and capitals", "collaborator"])
def test_adding_a_user_whose_email_is_already_in_the_account_is_a_conflict(team: Team, taken: str) -> None:
    address = {
        "owner": team.account.owner_email,
        "owner in capitals": team.account.owner_email.upper(),
        "member with spaces and capitals": f"  {team.member['email'].upper()} ",
        "collaborator": team.collaborator["email"],
    }[taken]
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, email=address))

    assert_refused(reply, 409)
    assert users(team.account) == before


@pytest.mark.parametrize("role", ["unknown", "another account's", "a user's id"])
def test_adding_a_user_with_a_role_the_account_does_not_have_is_refused(
    team: Team, other_account: Account, role: str
) -> None:
    role_id = {
        "unknown": 99999999999,
        "another account's": other_account.role_id("User"),
        "a user's id": team.member["userId"],
    }[role]
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, roleId=role_id))

    assert_names_field(reply, "roleId")
    assert users(team.account) == before


@pytest.mark.parametrize("password", ["", "1234567"])
def test_adding_a_user_with_a_password_shorter_than_eight_characters_is_refused(team: Team, password: str) -> None:
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, password=password, confirmPassword=password))

    assert_names_field(reply, "password")
    assert users(team.account) == before


def test_adding_a_user_without_a_password_or_a_generated_one_is_refused(team: Team) -> None:
    before = users(team.account)
    body = new_user_body(team.account)
    del body["password"], body["confirmPassword"], body["generatePassword"]

    reply = team.account.api.post("/users", body)

    assert_names_field(reply, "password")
    assert users(team.account) == before


@pytest.mark.parametrize("confirmation", ["corr3ct-horse-battery", None])
def test_adding_a_user_whose_password_confirmation_differs_is_refused(team: Team, confirmation: str | None) -> None:
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, confirmPassword=confirmation))

    assert_names_field(reply, "confirmPassword")
    assert users(team.account) == before


@pytest.mark.parametrize("full_name", ["", "   ", "x" * 101], ids=repr)
def test_adding_a_user_with_an_empty_or_overlong_full_name_is_refused(team: Team, full_name: str) -> None:
    before = users(team.account)

    reply = team.account.api.post("/users", new_user_body(team.account, fullName=full_name))

    assert_names_field(reply, "fullName")
    assert users(team.account) == before


def test_passwords_never_appear_in_any_response(account: Account) -> None:
    body = new_user_body(account)
    added = account.api.post("/users", body)
    user_id = user_by_email(account, body["email"])["userId"]
    new_password = "An0ther-Secret-Pass"
    changed = account.api.put("/users", user_change(account, user_id, password=new_password))

    replies = [
        added,
        changed,
        account.api.get("/users"),
        account.api.get(f"/users/{user_id}"),
        account.api.get("/collaborators"),
    ]

    assert (added.status, changed.status) == (204, 204), (added.body, changed.body)
    for reply in replies:
        text = reply.body.decode()
        assert PASSWORD not in text and new_password not in text
        assert "password" not in text.lower(), text


# Updating users


def test_updating_a_user_changes_what_it_shows_and_marks_it_updated(account: Account) -> None:
    role = account.add_role("Deployers")
    user = account.add_user(email(), full_name="Before Example")
    new_email = email()

    reply = account.api.put(
        "/users",
        user_change(
            account,
            user["userId"],
            fullName="After Example",
            email=new_email,
            roleId=role["roleId"],
            password="N3w-Password-Here",
            notifyWhenBuildStatusChangedOnly=True,
        ),
    )

    assert_done(reply)
    shown = full_user(account, user["userId"])
    assert (shown["fullName"], shown["email"], shown["roleId"], shown["roleName"]) == (
        "After Example",
        new_email,
        role["roleId"],
        "Deployers",
    )
    assert shown["notifyWhenBuildStatusChangedOnly"] is True
    assert shown["created"] == user["created"]
    assert TIMESTAMP.match(shown["updated"]), shown["updated"]
    assert shown["updated"] >= shown["created"]
    listed = user_by_email(account, new_email)
    assert set(listed) == LIST_FIELDS | {"updated"}
    assert (listed["roleName"], listed["updated"]) == ("Deployers", shown["updated"])
    assert [(entry["userId"], entry["email"]) for entry in users(account)] == [
        (owner(account)["userId"], account.owner_email),
        (user["userId"], new_email),
    ]
    assert "updated" not in owner(account)
    assert_done(account.api.post("/users", new_user_body(account, email=user["email"])))  # the old e-mail is free


def test_a_user_moved_to_another_role_leaves_the_old_one_and_acts_with_the_new_one(account: Account) -> None:
    role = account.add_role("Deployers")
    user = account.add_user(email(), role="Deployers")
    caller = account.caller_for(user["email"])
    assert_refused(caller.post("/users", new_user_body(account)), 403)
    assert_refused(account.api.delete(f"/roles/{role['roleId']}"), 409)

    to_administrator = user_change(account, user["userId"], roleId=account.role_id("Administrator"))
    assert_done(account.api.put("/users", to_administrator))

    listed = user_by_email(account, user["email"])
    assert (listed["roleId"], listed["roleName"]) == (account.role_id("Administrator"), "Administrator")
    assert_done(account.api.delete(f"/roles/{role['roleId']}"))
    assert_done(caller.post("/users", new_user_body(account)))


def test_a_user_can_change_the_case_of_its_own_email(account: Account) -> None:
    user = account.add_user(email())
    shouted = user["email"].upper()

    assert_done(account.api.put("/users", user_change(account, user["userId"], email=shouted)))

    assert full_user(account, user["userId"])["email"] == shouted


@pytest.mark.parametrize("taken", ["owner's", "owner's in capitals", "collaborator's"])
def test_changing_a_users_email_to_another_members_is_a_conflict(team: Team, taken: str) -> None:
    address = {
        "owner's": team.account.owner_email,
        "owner's in capitals": team.account.owner_email.upper(),
        "collaborator's": team.collaborator["email"],
    }[taken]
    before = team_state(team.account)

    reply = team.account.api.put(
        "/users", user_change(team.account, team.member["userId"], email=address, fullName="Changed")
    )

    assert_refused(reply, 409)
    assert team_state(team.account) == before


def test_changing_the_owners_email_to_a_users_is_a_conflict(team: Team) -> None:
    before = team_state(team.account)

    reply = team.account.api.put(
        "/users", user_change(team.account, owner(team.account)["userId"], email=f" {team.member['email'].upper()}")
    )

    assert_refused(reply, 409)
    assert team_state(team.account) == before


def test_updating_a_user_with_an_invalid_email_is_refused(team: Team) -> None:
    before = team_state(team.account)

    reply = team.account.api.put("/users", user_change(team.account, team.member["userId"], email="not-an-address"))

    assert_names_field(reply, "email")
    assert team_state(team.account) == before


@pytest.mark.parametrize("who", ["unknown", "collaborator", "role"])
def test_updating_someone_who_is_not_a_user_of_the_account_is_not_found(team: Team, who: str) -> None:
    user_id = {"unknown": 99999999999, "collaborator": team.collaborator["userId"], "role": team.role["roleId"]}[who]
    body = {**user_change(team.account, team.member["userId"]), "userId": user_id, "email": email()}
    before = team_state(team.account)

    reply = team.account.api.put("/users", body)

    assert_refused(reply, 404)
    assert team_state(team.account) == before


def test_the_owners_role_cannot_be_changed(team: Team) -> None:
    owner_id = owner(team.account)["userId"]
    before = team_state(team.account)

    reply = team.account.api.put("/users", user_change(team.account, owner_id, roleId=team.account.role_id("User")))

    assert_refused(reply, 409)
    assert team_state(team.account) == before


def test_the_owners_other_details_can_be_changed(account: Account) -> None:
    owner_id = owner(account)["userId"]

    assert_done(account.api.put("/users", user_change(account, owner_id, fullName="Owner Renamed")))

    shown = owner(account)
    assert (shown["fullName"], shown["roleName"], shown["isOwner"]) == ("Owner Renamed", "Administrator", True)


@pytest.mark.parametrize("role", ["unknown", "another account's"])
def test_updating_a_user_to_a_role_the_account_does_not_have_is_refused(
    team: Team, other_account: Account, role: str
) -> None:
    role_id = 99999999999 if role == "unknown" else other_account.role_id("Administrator")
    before = team_state(team.account)

    reply = team.account.api.put("/users", user_change(team.account, team.member["userId"], roleId=role_id))

    assert_names_field(reply, "roleId")
    assert team_state(team.account) == before


def test_updating_a_user_with_a_short_password_is_refused(team: Team) -> None:
    before = team_state(team.account)

    reply = team.account.api.put(
        "/users", user_change(team.account, team.member["userId"], password="short", fullName="Changed")
    )

    assert_names_field(reply, "password")
    assert team_state(team.account) == before


UPDATE_WRONG_TYPES: dict[str, tuple[str, Any]] = {
    "userId text": ("userId", "abc"),
    "fullName number": ("fullName", 5),
    "password number": ("password", 12345678),
    "successfulBuildNotification number": ("successfulBuildNotification", 5),
    "failedDeploymentNotification boolean": ("failedDeploymentNotification", True),
    "notifyWhenBuildStatusChangedOnly text": ("notifyWhenBuildStatusChangedOnly", "yes"),
}


@pytest.mark.parametrize("case", UPDATE_WRONG_TYPES.values(), ids=UPDATE_WRONG_TYPES.keys())
def test_updating_a_user_with_a_field_of_the_wrong_type_is_refused_naming_it(team: Team, case: tuple[str, Any]) -> None:
    field, value = case
    body = {**user_change(team.account, team.member["userId"], fullName="Changed"), field: value}
    before = team_state(team.account)

    reply = team.account.api.put("/users", body)

    assert_names_field(reply, field)
    assert team_state(team.account) == before


@pytest.mark.parametrize("field", ["userId", "fullName", "email", "roleId"])
def test_updating_a_user_without_a_required_field_is_refused_naming_it(team: Team, field: str) -> None:
    body = user_change(team.account, team.member["userId"], fullName="Changed")
    del body[field]
    before = team_state(team.account)

    reply = team.account.api.put("/users", body)

    assert_names_field(reply, field)
    assert team_state(team.account) == before


# Deleting users


def test_deleting_a_user_removes_it(account: Account) -> None:
    user = account.add_user(email())

    assert_done(account.api.delete(f"/users/{user['userId']}"))

    assert_refused(account.api.get(f"/users/{user['userId']}"), 404)
    assert [entry["email"] for entry in users(account)] == [account.owner_email]
    assert_refused(account.api.delete(f"/users/{user['userId']}"), 404)


def test_deleting_the_owner_is_refused(team: Team) -> None:
    before = team_state(team.account)

    reply = team.account.api.delete(f"/users/{owner(team.account)['userId']}")

    assert_refused(reply, 409)
    assert team_state(team.account) == before


@pytest.mark.parametrize("who", ["unknown", "not a number", "collaborator", "role"])
def test_deleting_someone_who_is_not_a_user_of_the_account_is_not_found(team: Team, who: str) -> None:
    user_id = {
        "unknown": 99999999999,
        "not a number": "abc",
        "collaborator": team.collaborator["userId"],
        "role": team.role["roleId"],
    }[who]
    before = team_state(team.account)
    roles_before = team.account.api.get("/roles").json

    reply = team.account.api.delete(f"/users/{user_id}")

    assert_refused(reply, 404)
    assert team_state(team.account) == before
    assert team.account.api.get("/roles").json == roles_before


def test_a_deleted_users_key_stops_working_and_its_email_can_be_added_again(account: Account) -> None:
    user = account.add_user(email(), full_name="First Life")
    caller = account.caller_for(user["email"])
    assert caller.get("/users").status == 200

    assert_done(account.api.delete(f"/users/{user['userId']}"))

    reply = caller.get("/users")
    assert reply.status == 401, reply.body
    assert reply.json == {"message": "Authorization required"}
    again = account.add_user(user["email"], role="Administrator", full_name="Second Life")
    assert again["userId"] != user["userId"]
    assert (again["fullName"], again["roleName"]) == ("Second Life", "Administrator")
    assert_refused(caller.get("/users"), 401)  # the old key does not come back with the e-mail


# Who may change users


def test_a_user_with_the_built_in_user_role_can_read_users_but_not_change_them(team: Team) -> None:
    caller = team.account.caller_for(team.member["email"])
    before = team_state(team.account)

    assert caller.get("/users").json == before["users"]
    assert (
        caller.get(f"/users/{team.member['userId']}").json
        == team.account.api.get(f"/users/{team.member['userId']}").json
    )
    assert_refused(caller.post("/users", new_user_body(team.account)), 403)
    assert_refused(caller.put("/users", user_change(team.account, team.member["userId"], fullName="Self Renamed")), 403)
    assert_refused(
        caller.put(
            "/users", user_change(team.account, team.member["userId"], roleId=team.account.role_id("Administrator"))
        ),
        403,
    )
    assert_refused(caller.delete(f"/users/{team.member['userId']}"), 403)
    assert_refused(caller.delete(f"/users/{owner(team.account)['userId']}"), 403)

    assert team_state(team.account) == before


@pytest.mark.parametrize("granted", ["AddUser", "UpdateUserDetails", "DeleteUser"])
def test_a_custom_role_allows_exactly_the_user_changes_it_grants(account: Account, granted: str) -> None:
    account.add_role("User keepers", {granted})
    keeper = account.add_user(email(), role="User keepers")
    caller = account.caller_for(keeper["email"])
    target = account.add_user(email(), full_name="Target Example")
    body = new_user_body(account)

    added = caller.post("/users", body)
    updated = caller.put("/users", user_change(account, target["userId"], fullName="Renamed By Keeper"))
    deleted = caller.delete(f"/users/{target['userId']}")

    assert added.status == (204 if granted == "AddUser" else 403), added.body
    assert updated.status == (204 if granted == "UpdateUserDetails" else 403), updated.body
    assert deleted.status == (204 if granted == "DeleteUser" else 403), deleted.body
    for reply in (added, updated, deleted):
        if reply.status == 403:
            assert_refused(reply, 403)
    listed = {user["email"]: user for user in users(account)}
    assert (body["email"] in listed) == (granted == "AddUser")
    assert (target["email"] in listed) == (granted != "DeleteUser")
    if granted != "DeleteUser":
        expected = "Renamed By Keeper" if granted == "UpdateUserDetails" else "Target Example"
        assert listed[target["email"]]["fullName"] == expected


def test_an_administrator_who_is_not_the_owner_can_manage_users(account: Account) -> None:
    admin = account.add_user(email(), role="Administrator")
    caller = account.caller_for(admin["email"])
    body = new_user_body(account)

    assert_done(caller.post("/users", body))
    added = user_by_email(account, body["email"])
    assert_done(caller.put("/users", user_change(account, added["userId"], fullName="Changed By Admin")))
    assert full_user(account, added["userId"])["fullName"] == "Changed By Admin"
    assert_done(caller.delete(f"/users/{added['userId']}"))
    assert_refused(caller.delete(f"/users/{owner(account)['userId']}"), 409)

    assert [user["email"] for user in users(account)] == [account.owner_email, admin["email"]]


# Taking the account with UpdateUserDetails (issue 19, finding 7)


def user_keeper(account: Account, *granted: str) -> tuple[dict[str, Any], Caller]:
    """A user whose custom role grants ``granted`` (UpdateUserDetails by default), and a caller acting as it."""
    name = unique("keepers")[:40]
    account.add_role(name, set(granted or {"UpdateUserDetails"}))
    keeper = account.add_user(email(), role=name)
    return keeper, account.caller_for(keeper["email"])


def test_a_user_keeper_cannot_reset_the_owners_password(account: Account) -> None:
    _, caller = user_keeper(account)
    owner_id = owner(account)["userId"]

    reply = caller.put("/users", user_change(account, owner_id, password="taken over, owner"))

    assert_refused(reply, 403)
    assert "owner" in reply.json["message"]


def test_a_user_keeper_cannot_change_an_administrator(account: Account) -> None:
    _, caller = user_keeper(account)
    admin = account.add_user(email(), role="Administrator")
    before = team_state(account)

    for change in ({"password": "taken over, admin"}, {"email": email()}, {"roleId": account.role_id("User")}):
        reply = caller.put("/users", user_change(account, admin["userId"], **change))
        assert_refused(reply, 403)
        assert "Administrator" in reply.json["message"]
    assert team_state(account) == before


def test_a_user_keeper_cannot_raise_its_own_role(account: Account) -> None:
    keeper, caller = user_keeper(account)
    account.add_role("Everything but admin", {"UpdateUserDetails", "ManageProjects", "DeleteUser", "AddRole"})

    to_admin = caller.put("/users", user_change(account, keeper["userId"], roleId=account.role_id("Administrator")))
    to_more = caller.put("/users", user_change(account, keeper["userId"],
                                               roleId=account.role_id("Everything but admin")))  # fmt: skip

    assert_refused(to_admin, 403)
    assert_refused(to_more, 403)
    assert user_by_email(account, keeper["email"])["roleName"].startswith("keepers")


def test_a_user_adder_cannot_add_an_administrator(account: Account) -> None:
    _, caller = user_keeper(account, "AddUser")
    body = new_user_body(account, roleId=account.role_id("Administrator"))

    assert_refused(caller.post("/users", body), 403)
    assert body["email"] not in [user["email"] for user in users(account)]


def test_another_administrator_cannot_change_the_owner(account: Account) -> None:
    admin = account.add_user(email(), role="Administrator")
    caller = account.caller_for(admin["email"])

    reply = caller.put("/users", user_change(account, owner(account)["userId"], password="taken over, owner"))

    assert_refused(reply, 403)


def test_a_user_keeper_still_changes_users_and_gives_roles_it_holds(account: Account) -> None:
    keeper, caller = user_keeper(account)
    target = account.add_user(email())
    keepers_role = user_by_email(account, keeper["email"])["roleId"]

    assert_done(caller.put("/users", user_change(account, target["userId"], roleId=keepers_role, password="new, long")))
    assert_done(caller.put("/users", user_change(account, keeper["userId"], roleId=account.role_id("User"))))


def test_a_user_keeper_cannot_make_a_collaborator_an_administrator(account: Account, client: Client) -> None:
    _, caller = user_keeper(account)
    friend = add_collaborator(account, new_account(client).owner_email)

    reply = caller.put("/collaborators", {"userId": friend["userId"], "roleId": account.role_id("Administrator")})

    assert_refused(reply, 403)
    assert "Administrator" in reply.json["message"]
