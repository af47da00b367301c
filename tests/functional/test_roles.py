"""Roles: the two built-in ones, custom ones with permission groups, and who may change them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from chalicelib.api import roles as role_views
from tests.support import Account, Caller, assert_refused, unique, view_answer

# The permission groups of role details, as the API contract lists them.
SPEC_GROUPS: list[tuple[str, list[str]]] = [
    ("Projects", ["ManageProjects", "UpdateProjectSettings", "RunProjectBuild", "DeleteProjectBuilds"]),
    ("Environments", ["ManageEnvironments", "UpdateEnvironmentSettings", "DeployToEnvironment"]),
    ("Account", ["UpdateAccountDetails"]),
    ("Users", ["AddUser", "UpdateUserDetails", "DeleteUser"]),
    ("Roles", ["AddRole", "UpdateRoleDetails", "DeleteRole"]),
    ("User", ["ConfigureApiKeys"]),
]
ALL_PERMISSIONS = {permission for _, permissions in SPEC_GROUPS for permission in permissions}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,7})?\+00:00$")


def flags(role: dict[str, Any]) -> dict[str, bool]:
    """Every permission of role details with whether it is allowed."""
    return {
        permission["name"]: permission["allowed"] for group in role["groups"] for permission in group["permissions"]
    }


def allowed(role: dict[str, Any]) -> set[str]:
    return {name for name, is_allowed in flags(role).items() if is_allowed}


def with_flags(role: dict[str, Any], granted: set[str]) -> dict[str, Any]:
    """A copy of role details that grants exactly ``granted``: the body of a full-role PUT."""
    changed = copy.deepcopy(role)
    for group in changed["groups"]:
        for permission in group["permissions"]:
            permission["allowed"] = permission["name"] in granted
    return changed


def details(account: Account, role_id: int) -> dict[str, Any]:
    reply = account.api.get(f"/roles/{role_id}")
    assert reply.status == 200, reply.body
    return reply.json


def role_names(account: Account) -> list[str]:
    return [role["name"] for role in account.api.get("/roles").json]


def user_of_role(account: Account, role: str) -> tuple[dict[str, Any], Caller]:
    """A new user holding ``role``, and a caller acting as that user."""
    email = f"{unique('user')}@team.example"
    user = account.add_user(email, role=role)
    return user, account.caller_for(email)


def move_user(account: Account, user: dict[str, Any], role_id: int) -> None:
    reply = account.api.put(
        "/users",
        {
            "userId": user["userId"],
            "fullName": user["fullName"],
            "email": user["email"],
            "password": None,
            "roleId": role_id,
        },
    )
    assert reply.status == 204, reply.body


# Listing and reading roles


def test_role_list_shows_built_in_roles_first_then_custom_roles_without_groups(account: Account) -> None:
    first = account.add_role("Deployers")
    second = account.add_role("Auditors")

    roles = account.api.get("/roles").json

    assert [(role["name"], role["isSystem"]) for role in roles] == [
        ("Administrator", True),
        ("User", True),
        ("Deployers", False),
        ("Auditors", False),
    ]
    assert [role["roleId"] for role in roles[2:]] == [first["roleId"], second["roleId"]]
    assert all("groups" not in role for role in roles)
    assert all(TIMESTAMP.match(role["created"]) for role in roles)
    assert view_answer(account, role_views.list_roles, "/api/roles") == roles  # the view GET /roles runs


def test_role_details_are_the_same_at_the_roles_path_and_the_users_path(account: Account) -> None:
    custom = account.add_role("Deployers", {"DeployToEnvironment"})
    for role_id in (account.role_id("Administrator"), account.role_id("User"), custom["roleId"]):
        by_roles = account.api.get(f"/roles/{role_id}")
        by_users = account.api.get(f"/users/{role_id}")

        assert by_roles.status == by_users.status == 200
        assert by_roles.json == by_users.json
        assert by_roles.json["roleId"] == role_id
        assert "groups" in by_roles.json


@pytest.mark.parametrize("role", ["Administrator", "User", "custom"])
def test_role_details_show_exactly_the_six_permission_groups_of_the_contract(account: Account, role: str) -> None:
    role_id = account.add_role("Custom")["roleId"] if role == "custom" else account.role_id(role)

    groups = details(account, role_id)["groups"]

    assert [(group["name"], [p["name"] for p in group["permissions"]]) for group in groups] == SPEC_GROUPS
    for group in groups:
        for permission in group["permissions"]:
            assert set(permission) == {"name", "description", "allowed"}
            assert isinstance(permission["description"], str) and permission["description"].strip()
            assert isinstance(permission["allowed"], bool)


def test_administrator_role_allows_every_permission(account: Account) -> None:
    role = details(account, account.role_id("Administrator"))

    assert role["isSystem"] is True
    assert allowed(role) == ALL_PERMISSIONS


def test_built_in_user_role_allows_only_running_builds(account: Account) -> None:
    role = details(account, account.role_id("User"))

    assert role["isSystem"] is True
    assert allowed(role) == {"RunProjectBuild"}


def test_unknown_role_id_is_not_found(account: Account) -> None:
    assert_refused(account.api.get("/roles/99999999"), 404)
    assert_refused(account.api.get("/users/99999999"), 404)


# Adding roles


def test_added_role_is_custom_allows_nothing_and_is_listed(account: Account) -> None:
    reply = account.api.post("/roles", {"name": "Deployers"})

    assert reply.status == 200, reply.body
    role = reply.json
    assert role["name"] == "Deployers"
    assert role["isSystem"] is False
    assert TIMESTAMP.match(role["created"])
    assert "updated" not in role
    assert allowed(role) == set() and set(flags(role)) == ALL_PERMISSIONS
    assert details(account, role["roleId"]) == role
    assert role_names(account) == ["Administrator", "User", "Deployers"]


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "   "}, {"name": None}], ids=repr)
def test_adding_a_role_without_a_name_is_refused_naming_the_field(account: Account, body: dict[str, Any]) -> None:
    reply = account.api.post("/roles", body)

    assert_refused(reply, 400)
    assert "name" in reply.json["message"]
    assert role_names(account) == ["Administrator", "User"]


def test_adding_a_role_with_a_name_already_taken_in_any_case_is_a_conflict(account: Account) -> None:
    account.add_role("Deployers")

    for name in ["Deployers", "DEPLOYERS", "deployers", " Deployers ", "Administrator", "administrator", "USER"]:
        assert_refused(account.api.post("/roles", {"name": name}), 409)
    assert role_names(account) == ["Administrator", "User", "Deployers"]


def test_the_same_role_name_can_be_used_in_two_accounts(account: Account, other_account: Account) -> None:
    account.add_role("Deployers")

    assert other_account.api.post("/roles", {"name": "Deployers"}).status == 200
    assert role_names(other_account) == ["Administrator", "User", "Deployers"]


# Updating roles


def test_updating_a_role_sets_its_permissions_and_marks_it_updated(account: Account) -> None:
    role = account.api.post("/roles", {"name": "Deployers"}).json
    granted = {"DeployToEnvironment", "RunProjectBuild", "ConfigureApiKeys"}

    reply = account.api.put("/roles", with_flags(role, granted))

    assert reply.status == 200, reply.body
    assert allowed(reply.json) == granted
    assert reply.json["name"] == "Deployers"
    assert reply.json["created"] == role["created"]
    assert TIMESTAMP.match(reply.json["updated"]) and reply.json["updated"] >= role["created"]
    assert details(account, role["roleId"]) == reply.json
    listed = next(entry for entry in account.api.get("/roles").json if entry["roleId"] == role["roleId"])
    assert listed["updated"] == reply.json["updated"]


def test_updating_a_role_can_take_permissions_away(account: Account) -> None:
    role = account.add_role("Deployers", {"DeployToEnvironment", "RunProjectBuild"})

    reply = account.api.put("/roles", with_flags(role, {"RunProjectBuild"}))

    assert reply.status == 200, reply.body
    assert allowed(details(account, role["roleId"])) == {"RunProjectBuild"}


def test_updating_a_role_can_rename_it_and_frees_the_old_name(account: Account) -> None:
    role = account.add_role("Deployers", {"DeployToEnvironment"})

    reply = account.api.put("/roles", {**role, "name": "Releasers"})

    assert reply.status == 200, reply.body
    assert reply.json["name"] == "Releasers"
    assert allowed(reply.json) == {"DeployToEnvironment"}
    assert role_names(account) == ["Administrator", "User", "Releasers"]
    assert account.api.post("/roles", {"name": "Deployers"}).status == 200


def test_a_role_can_be_renamed_to_its_own_name_in_another_case(account: Account) -> None:
    role = account.add_role("Deployers")

    reply = account.api.put("/roles", {**role, "name": "DEPLOYERS"})

    assert reply.status == 200, reply.body
    assert role_names(account) == ["Administrator", "User", "DEPLOYERS"]


def test_renaming_a_role_to_a_name_already_taken_is_a_conflict(account: Account) -> None:
    account.add_role("Auditors")
    role = account.add_role("Deployers")

    for taken in ["Auditors", "auditors", "Administrator", "user"]:
        assert_refused(account.api.put("/roles", {**with_flags(role, {"AddRole"}), "name": taken}), 409)
    assert details(account, role["roleId"]) == role
    assert role_names(account) == ["Administrator", "User", "Auditors", "Deployers"]


def _unknown_permission(role: dict[str, Any]) -> dict[str, Any]:
    role["groups"][0]["permissions"].append({"name": "LaunchRockets", "description": "x", "allowed": True})
    return role


def _unknown_group(role: dict[str, Any]) -> dict[str, Any]:
    role["groups"].append({"name": "Spaceships", "permissions": []})
    return role


def _no_groups(role: dict[str, Any]) -> dict[str, Any]:
    del role["groups"]
    return role


def _groups_not_a_list(role: dict[str, Any]) -> dict[str, Any]:
    role["groups"] = {"Projects": []}
    return role


def _allowed_not_a_boolean(role: dict[str, Any]) -> dict[str, Any]:
    role["groups"][0]["permissions"][0]["allowed"] = "yes"
    return role


@pytest.mark.parametrize(
    "spoil",
    [_unknown_permission, _unknown_group, _no_groups, _groups_not_a_list, _allowed_not_a_boolean],
    ids=lambda spoil: spoil.__name__.strip("_"),
)
def test_updating_a_role_with_malformed_groups_is_refused_and_changes_nothing(account: Account, spoil: Any) -> None:
    role = account.add_role("Deployers", {"RunProjectBuild"})

    body = spoil(with_flags(role, ALL_PERMISSIONS))
    reply = account.api.put("/roles", body)

    assert_refused(reply, 400)
    assert details(account, role["roleId"]) == role


@pytest.mark.parametrize("built_in", ["Administrator", "User"])
def test_built_in_roles_cannot_be_updated(account: Account, built_in: str) -> None:
    role = details(account, account.role_id(built_in))

    assert_refused(account.api.put("/roles", with_flags(role, {"AddRole"})), 409)
    assert_refused(account.api.put("/roles", {**role, "name": f"{built_in} renamed"}), 409)
    assert details(account, role["roleId"]) == role
    assert role_names(account) == ["Administrator", "User"]


def test_updating_an_unknown_role_is_not_found(account: Account) -> None:
    role = account.add_role("Deployers")

    assert_refused(account.api.put("/roles", {**role, "roleId": 99999999}), 404)
    assert details(account, role["roleId"]) == role


# Deleting roles


def test_deleting_a_role_removes_it(account: Account) -> None:
    role = account.add_role("Deployers")

    reply = account.api.delete(f"/roles/{role['roleId']}")

    assert reply.status == 204
    assert reply.body == b""
    assert_refused(account.api.get(f"/roles/{role['roleId']}"), 404)
    assert_refused(account.api.get(f"/users/{role['roleId']}"), 404)
    assert_refused(account.api.delete(f"/roles/{role['roleId']}"), 404)
    assert role_names(account) == ["Administrator", "User"]


def test_a_deleted_roles_name_can_be_used_again(account: Account) -> None:
    role = account.add_role("Deployers")
    account.api.delete(f"/roles/{role['roleId']}")

    reply = account.api.post("/roles", {"name": "Deployers"})

    assert reply.status == 200
    assert reply.json["roleId"] != role["roleId"]


@pytest.mark.parametrize("built_in", ["Administrator", "User"])
def test_built_in_roles_cannot_be_deleted(account: Account, built_in: str) -> None:
    role_id = account.role_id(built_in)

    assert_refused(account.api.delete(f"/roles/{role_id}"), 409)
    assert role_names(account) == ["Administrator", "User"]


def test_deleting_an_unknown_role_is_not_found(account: Account) -> None:
    assert_refused(account.api.delete("/roles/99999999"), 404)
    assert role_names(account) == ["Administrator", "User"]


def _move_user_away(account: Account, holder: dict[str, Any]) -> None:
    move_user(account, holder, account.role_id("User"))


def _delete_user(account: Account, holder: dict[str, Any]) -> None:
    assert account.api.delete(f"/users/{holder['userId']}").status == 204


@pytest.mark.parametrize("release", [_move_user_away, _delete_user], ids=["user-moves", "user-deleted"])
def test_a_role_held_by_a_user_cannot_be_deleted_until_nobody_holds_it(account: Account, release: Any) -> None:
    role = account.add_role("Deployers")
    holder, _ = user_of_role(account, "Deployers")

    assert_refused(account.api.delete(f"/roles/{role['roleId']}"), 409)
    assert details(account, role["roleId"]) == role

    release(account, holder)

    assert account.api.delete(f"/roles/{role['roleId']}").status == 204
    assert role_names(account) == ["Administrator", "User"]


@pytest.mark.parametrize("release", ["moves", "deleted"])
def test_a_role_held_by_a_collaborator_cannot_be_deleted_until_nobody_holds_it(
    account: Account, other_account: Account, release: str
) -> None:
    role = account.add_role("Deployers")
    added = account.api.post("/collaborators", {"email": other_account.owner_email, "roleId": role["roleId"]})
    assert added.status == 204, added.body
    collaborator = account.api.get("/collaborators").json[0]

    assert_refused(account.api.delete(f"/roles/{role['roleId']}"), 409)

    if release == "moves":
        reply = account.api.put("/collaborators", {"userId": collaborator["userId"], "roleId": account.role_id("User")})
    else:
        reply = account.api.delete(f"/collaborators/{collaborator['userId']}")
    assert reply.status == 204, reply.body

    assert account.api.delete(f"/roles/{role['roleId']}").status == 204


# Who may change roles


def test_a_user_with_the_built_in_user_role_can_read_roles_but_not_change_them(account: Account) -> None:
    custom = account.add_role("Deployers")
    _, caller = user_of_role(account, "User")
    before = account.api.get("/roles").json

    assert caller.get("/roles").json == before
    assert caller.get(f"/roles/{custom['roleId']}").json == custom
    assert_refused(caller.post("/roles", {"name": "Sneaky"}), 403)
    assert_refused(caller.put("/roles", with_flags(custom, ALL_PERMISSIONS)), 403)
    assert_refused(caller.delete(f"/roles/{custom['roleId']}"), 403)

    assert account.api.get("/roles").json == before
    assert details(account, custom["roleId"]) == custom


@pytest.mark.parametrize("granted", ["AddRole", "UpdateRoleDetails", "DeleteRole"])
def test_a_custom_role_allows_exactly_the_role_changes_it_grants(account: Account, granted: str) -> None:
    account.add_role("Role keepers", {granted})
    _, caller = user_of_role(account, "Role keepers")
    target = account.add_role("Target")

    added = caller.post("/roles", {"name": "Added by keeper"})
    updated = caller.put("/roles", with_flags(target, {granted}))  # the one permission the keeper holds
    deleted = caller.delete(f"/roles/{target['roleId']}")

    assert added.status == (200 if granted == "AddRole" else 403), added.body
    assert updated.status == (200 if granted == "UpdateRoleDetails" else 403), updated.body
    assert deleted.status == (204 if granted == "DeleteRole" else 403), deleted.body
    names = role_names(account)
    assert ("Added by keeper" in names) == (granted == "AddRole")
    assert ("Target" in names) == (granted != "DeleteRole")
    if granted != "DeleteRole":
        expected = {granted} if granted == "UpdateRoleDetails" else set()
        assert allowed(details(account, target["roleId"])) == expected


def test_a_role_updater_cannot_grant_itself_environments(account: Account) -> None:
    """The attack: a role that may only update roles reads itself, allows everything and saves."""
    own = account.add_role("Role updaters", {"UpdateRoleDetails"})
    _, caller = user_of_role(account, "Role updaters")
    environment = {"name": "Production", "provider": "Webhook", "settings": {"providerSettings": []}}
    assert_refused(caller.post("/environments", environment), 403)

    message = assert_refused(
        caller.put("/roles", with_flags(caller.get(f"/roles/{own['roleId']}").json, ALL_PERMISSIONS)), 403
    )

    assert "Administrator" in message
    assert details(account, own["roleId"]) == own
    assert_refused(caller.post("/environments", environment), 403)
    assert account.api.get("/environments").json == []


def test_a_role_updater_cannot_grant_another_role_what_it_does_not_hold(account: Account) -> None:
    """Nor through a second role it is then given (assigning checks the same): it grants only what it holds."""
    account.add_role("Role updaters", {"UpdateRoleDetails", "RunProjectBuild"})
    _, caller = user_of_role(account, "Role updaters")
    target = account.add_role("Target", {"DeleteRole"})

    message = assert_refused(caller.put("/roles", with_flags(target, {"DeleteRole", "ManageEnvironments"})), 403)

    assert "ManageEnvironments" in message
    assert details(account, target["roleId"]) == target
    kept = caller.put("/roles", with_flags(target, {"DeleteRole", "RunProjectBuild"}))  # held, or there already
    assert kept.status == 200, kept.body
    assert allowed(kept.json) == {"DeleteRole", "RunProjectBuild"}
    taken = caller.put("/roles", with_flags(kept.json, {"RunProjectBuild"}))  # taking away grants nothing
    assert taken.status == 200, taken.body
    assert allowed(details(account, target["roleId"])) == {"RunProjectBuild"}


def test_an_added_role_grants_nothing_whatever_the_body_asks(account: Account) -> None:
    account.add_role("Role adders", {"AddRole"})
    _, caller = user_of_role(account, "Role adders")
    body = with_flags(account.add_role("Template"), ALL_PERMISSIONS) | {"name": "Everything please"}

    added = caller.post("/roles", body)

    assert added.status == 200, added.body
    assert allowed(added.json) == set()
    assert allowed(details(account, added.json["roleId"])) == set()


def test_a_change_to_a_role_applies_at_once_to_the_users_holding_it(account: Account) -> None:
    role = account.add_role("Growing")
    _, caller = user_of_role(account, "Growing")
    assert_refused(caller.post("/roles", {"name": "First try"}), 403)

    assert account.api.put("/roles", with_flags(role, {"AddRole"})).status == 200

    assert caller.post("/roles", {"name": "Second try"}).status == 200
    assert "Second try" in role_names(account)


def test_an_administrator_who_is_not_the_owner_can_manage_roles(account: Account) -> None:
    _, caller = user_of_role(account, "Administrator")

    role = caller.post("/roles", {"name": "By admin"})
    assert role.status == 200
    assert caller.put("/roles", with_flags(role.json, {"AddUser"})).status == 200
    assert caller.delete(f"/roles/{role.json['roleId']}").status == 204


# Ids


def test_role_ids_and_user_ids_never_coincide(account: Account, other_account: Account) -> None:
    for index in range(2):
        account.add_role(f"Role {index}")
        user_of_role(account, "User")
        other_account.add_role(f"Role {index}")
        user_of_role(other_account, "User")
    account.api.post("/collaborators", {"email": other_account.owner_email, "roleId": account.role_id("User")})

    for team in (account, other_account):
        role_ids = [role["roleId"] for role in team.api.get("/roles").json]
        user_ids = [user["userId"] for user in team.api.get("/users").json + team.api.get("/collaborators").json]
        assert len(set(role_ids)) == len(role_ids) == 4
        assert not set(role_ids) & set(user_ids)
        for role_id in role_ids:
            assert "groups" in team.api.get(f"/users/{role_id}").json
        for user in team.api.get("/users").json:
            assert team.api.get(f"/users/{user['userId']}").json["user"]["email"] == user["email"]
