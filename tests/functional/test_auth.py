"""Who may call the team API, which account a call acts on, and how refusals look."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.domain.team.accounts import create_api_key
from tests.support import Account, Caller, Reply, assert_refused, new_account, unique

UNAUTHORIZED = {"message": "Authorization required"}

# Every team route; "{id}" stands for a path id.
TEAM_ROUTES = [
    (method, f"/{resource}{suffix}")
    for resource in ("users", "collaborators", "roles")
    for method, suffix in (("GET", ""), ("GET", "/{id}"), ("POST", ""), ("PUT", ""), ("DELETE", "/{id}"))
]
WRITE_ROUTES = [(method, path) for method, path in TEAM_ROUTES if method in ("POST", "PUT")]
ID_ROUTES = [(method, path) for method, path in TEAM_ROUTES if "{id}" in path]


def route_id(route: tuple[str, str]) -> str:
    return f"{route[0]} {route[1]}"


@pytest.fixture(scope="module")
def shared_account(client: Client) -> Account:
    """One account for tests that only read, or whose requests are all refused."""
    return new_account(client)


def prefixed(account: Account, key: str | None = None, name: str | None = None) -> Caller:
    """A caller using ``/api/account/{name}/...`` (the account's own name unless given)."""
    return Caller(account.client, account.key if key is None else key, f"/api/account/{name or account.name}")


def user_level_key(account: Account, email: str) -> str:
    return create_api_key(account.name, email, f"v2.{uuid.uuid4().hex}")


def snapshot(account: Account) -> dict[str, Any]:
    """Everything the team API shows of an account."""
    roles = account.api.get("/roles").json
    return {
        "roles": roles,
        "role details": [account.api.get(f"/roles/{role['roleId']}").json for role in roles],
        "users": account.api.get("/users").json,
        "collaborators": account.api.get("/collaborators").json,
    }


def new_user(account: Account, role: str = "User") -> dict[str, Any]:
    return account.add_user(f"{unique('user')}@team.example", role=role)


def user_change(user: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The PUT /users body that keeps ``user`` as it is apart from ``changes``."""
    body = {key: user[key] for key in ("userId", "fullName", "email", "roleId")}
    return {**body, "password": None, **changes}


# Authentication: a missing, malformed or unknown key on every route, as declared and under the account prefix, is
# refused with "Authorization required" in test_permission_matrix.py.


def test_unauthorized_writes_change_nothing(account: Account) -> None:
    role = account.add_role("Deployers")
    user = new_user(account)
    before = snapshot(account)
    anonymous = Caller(account.client, "not-a-key-of-anyone")

    assert anonymous.post("/roles", {"name": "Intruders"}).status == 401
    assert anonymous.put("/roles", {**role, "name": "Renamed"}).status == 401
    assert anonymous.delete(f"/roles/{role['roleId']}").status == 401
    assert (
        anonymous.post(
            "/users",
            {
                "fullName": "X",
                "email": "x@x.example",
                "roleId": role["roleId"],
                "generatePassword": True,
            },
        ).status
        == 401
    )
    assert anonymous.delete(f"/users/{user['userId']}").status == 401

    assert snapshot(account) == before


def test_the_key_of_a_removed_user_no_longer_works(account: Account) -> None:
    user = new_user(account)
    caller = account.caller_for(user["email"])
    assert caller.get("/roles").status == 200

    assert account.api.delete(f"/users/{user['userId']}").status == 204

    reply = caller.get("/roles")
    assert reply.status == 401
    assert reply.json == UNAUTHORIZED


def test_health_answers_without_a_key(client: Client) -> None:
    reply = Caller(client, None).get("/health")

    assert reply.status == 200
    assert reply.json == {"status": "ok"}


# Account isolation


def test_an_account_cannot_read_or_change_another_accounts_users(account: Account, other_account: Account) -> None:
    theirs = new_user(other_account)
    user_id = theirs["userId"]
    before = snapshot(other_account)

    assert_refused(account.api.get(f"/users/{user_id}"), 404)
    assert_refused(account.api.put("/users", user_change(theirs, fullName="Hijacked")), 404)
    assert_refused(account.api.delete(f"/users/{user_id}"), 404)
    owner_id = next(user["userId"] for user in before["users"] if user["isOwner"])
    assert_refused(account.api.get(f"/users/{owner_id}"), 404)

    assert snapshot(other_account) == before


def test_an_account_cannot_read_or_change_another_accounts_roles(account: Account, other_account: Account) -> None:
    theirs = other_account.add_role("Theirs")
    their_admin_id = other_account.role_id("Administrator")
    before = snapshot(other_account)
    own_before = snapshot(account)

    for role_id in (theirs["roleId"], their_admin_id):
        assert_refused(account.api.get(f"/roles/{role_id}"), 404)
        assert_refused(account.api.get(f"/users/{role_id}"), 404)
        assert_refused(account.api.delete(f"/roles/{role_id}"), 404)
    assert_refused(account.api.put("/roles", {**theirs, "name": "Hijacked"}), 404)

    assert snapshot(other_account) == before
    assert snapshot(account) == own_before


def test_an_account_cannot_read_or_change_another_accounts_collaborators(
    account: Account, other_account: Account, client: Client
) -> None:
    outsider = new_account(client)
    assert (
        other_account.api.post(
            "/collaborators", {"email": outsider.owner_email, "roleId": other_account.role_id("User")}
        ).status
        == 204
    )
    collaborator_id = other_account.api.get("/collaborators").json[0]["userId"]
    before = snapshot(other_account)

    assert_refused(account.api.get(f"/collaborators/{collaborator_id}"), 404)
    assert_refused(
        account.api.put("/collaborators", {"userId": collaborator_id, "roleId": account.role_id("Administrator")}), 404
    )
    assert_refused(account.api.delete(f"/collaborators/{collaborator_id}"), 404)

    assert snapshot(other_account) == before


def test_lists_never_show_another_accounts_items(account: Account, other_account: Account, client: Client) -> None:
    outsider = new_account(client)
    other_account.add_role("Theirs")
    their_user = new_user(other_account)
    other_account.api.post("/collaborators", {"email": outsider.owner_email, "roleId": other_account.role_id("User")})
    account.add_role("Ours")
    our_user = new_user(account)

    theirs = snapshot(other_account)
    ours = snapshot(account)

    their_role_ids = {role["roleId"] for role in theirs["roles"]}
    their_user_ids = {user["userId"] for user in theirs["users"] + theirs["collaborators"]}
    assert [role["name"] for role in ours["roles"]] == ["Administrator", "User", "Ours"]
    assert not their_role_ids & {role["roleId"] for role in ours["roles"]}
    assert {user["email"] for user in ours["users"]} == {account.owner_email, our_user["email"]}
    assert their_user["email"] not in {user["email"] for user in ours["users"]}
    assert ours["collaborators"] == []
    assert not their_user_ids & {user["userId"] for user in ours["users"]}
    assert all(user["accountName"] == account.name for user in ours["users"])


def test_a_role_of_another_account_cannot_be_given_to_a_user(account: Account, other_account: Account) -> None:
    theirs = other_account.add_role("Theirs")
    before = snapshot(account)

    reply = account.api.post(
        "/users",
        {
            "fullName": "Borrower",
            "email": "borrower@team.example",
            "roleId": theirs["roleId"],
            "generatePassword": True,
        },
    )

    assert 400 <= reply.status < 500 and reply.status != 401, reply.body
    assert_refused(reply, reply.status)
    assert snapshot(account) == before


def test_an_account_level_key_under_another_accounts_prefix_is_not_found(
    account: Account, other_account: Account
) -> None:
    before = snapshot(other_account)
    own_before = snapshot(account)
    intruder = prefixed(account, name=other_account.name)

    assert_refused(intruder.get("/roles"), 404)
    assert_refused(intruder.get("/users"), 404)
    assert_refused(intruder.post("/roles", {"name": "Intruders"}), 404)
    assert_refused(intruder.delete(f"/roles/{other_account.role_id('User')}"), 404)
    assert_refused(prefixed(account, name=unique("no-such-account")).get("/roles"), 404)

    assert snapshot(other_account) == before
    assert snapshot(account) == own_before


# The account prefix


def test_reads_answer_the_same_under_the_account_prefix(account: Account, client: Client) -> None:
    role = account.add_role("Deployers")
    user = new_user(account)
    outsider = new_account(client)
    account.api.post("/collaborators", {"email": outsider.owner_email, "roleId": role["roleId"]})
    collaborator_id = account.api.get("/collaborators").json[0]["userId"]
    under_prefix = prefixed(account)

    for path in (
        "/users",
        "/collaborators",
        "/roles",
        f"/roles/{role['roleId']}",
        f"/users/{role['roleId']}",
        f"/users/{user['userId']}",
        f"/collaborators/{collaborator_id}",
    ):
        plain = account.api.get(path)
        reply = under_prefix.get(path)
        assert plain.status == reply.status == 200, (path, reply.body)
        assert reply.json == plain.json, path


def test_writes_work_under_the_account_prefix(account: Account, client: Client) -> None:
    api = prefixed(account)
    outsider = new_account(client)

    role = api.post("/roles", {"name": "Deployers"})
    assert role.status == 200, role.body
    updated = api.put("/roles", {**role.json, "name": "Releasers"})
    assert updated.status == 200, updated.body
    assert (
        api.post(
            "/users",
            {
                "fullName": "Pat",
                "email": "pat@team.example",
                "roleId": role.json["roleId"],
                "generatePassword": True,
            },
        ).status
        == 204
    )
    user = next(user for user in account.api.get("/users").json if user["email"] == "pat@team.example")
    assert user["roleName"] == "Releasers"
    assert api.put("/users", user_change(user, fullName="Pat Renamed")).status == 204
    assert api.post("/collaborators", {"email": outsider.owner_email, "roleId": role.json["roleId"]}).status == 204
    collaborator = account.api.get("/collaborators").json[0]
    moved = api.put("/collaborators", {"userId": collaborator["userId"], "roleId": account.role_id("User")})
    assert moved.status == 204, moved.body
    assert account.api.get(f"/users/{user['userId']}").json["user"]["fullName"] == "Pat Renamed"
    assert account.api.get("/collaborators").json[0]["roleName"] == "User"

    assert api.delete(f"/collaborators/{collaborator['userId']}").status == 204
    assert api.delete(f"/users/{user['userId']}").status == 204
    assert api.delete(f"/roles/{role.json['roleId']}").status == 204
    assert snapshot(account)["collaborators"] == []
    assert [role["name"] for role in account.api.get("/roles").json] == ["Administrator", "User"]
    assert [user["email"] for user in account.api.get("/users").json] == [account.owner_email]


# User-level (v2) keys


@pytest.mark.parametrize("route", [("GET", "/roles"), ("GET", "/users"), ("POST", "/roles")], ids=route_id)
def test_a_user_level_key_without_the_account_prefix_is_refused_with_400(
    account: Account, route: tuple[str, str]
) -> None:
    caller = Caller(account.client, user_level_key(account, account.owner_email))
    before = snapshot(account)

    reply = caller.call(route[0], route[1], {"name": "Via v2"} if route[0] == "POST" else None)

    assert_refused(reply, 400)
    assert snapshot(account) == before


def test_a_user_level_key_works_under_its_accounts_prefix(account: Account) -> None:
    caller = prefixed(account, key=user_level_key(account, account.owner_email))

    reply = caller.get("/roles")
    assert reply.status == 200
    assert reply.json == account.api.get("/roles").json

    added = caller.post("/roles", {"name": "Via v2"})
    assert added.status == 200, added.body
    assert account.api.get(f"/roles/{added.json['roleId']}").json == added.json


def test_a_user_level_key_acts_with_its_users_role(account: Account) -> None:
    user = new_user(account)
    caller = prefixed(account, key=user_level_key(account, user["email"]))

    assert caller.get("/roles").status == 200
    assert_refused(caller.post("/roles", {"name": "Via v2"}), 403)
    assert [role["name"] for role in account.api.get("/roles").json] == ["Administrator", "User"]


def test_a_user_level_key_on_an_account_its_user_does_not_belong_to_is_not_found(
    account: Account, other_account: Account
) -> None:
    key = user_level_key(account, account.owner_email)
    before = snapshot(other_account)

    assert_refused(prefixed(other_account, key=key).get("/roles"), 404)
    assert_refused(prefixed(other_account, key=key).post("/roles", {"name": "Intruders"}), 404)
    assert_refused(prefixed(account, key=key, name=unique("no-such-account")).get("/roles"), 404)
    assert snapshot(other_account) == before


def test_a_collaborator_can_use_their_user_level_key_in_the_account_they_collaborate_in(
    account: Account, other_account: Account
) -> None:
    key = user_level_key(account, account.owner_email)
    in_other = prefixed(other_account, key=key)
    assert_refused(in_other.get("/roles"), 404)

    role_keepers = other_account.add_role("Role keepers", {"AddRole"})
    assert (
        other_account.api.post(
            "/collaborators", {"email": account.owner_email, "roleId": role_keepers["roleId"]}
        ).status
        == 204
    )

    reply = in_other.get("/roles")
    assert reply.status == 200
    assert reply.json == other_account.api.get("/roles").json
    added = in_other.post("/roles", {"name": "Added by collaborator"})
    assert added.status == 200, added.body
    assert "Added by collaborator" in [role["name"] for role in other_account.api.get("/roles").json]
    assert "Added by collaborator" not in [role["name"] for role in account.api.get("/roles").json]
    assert_refused(in_other.delete(f"/roles/{added.json['roleId']}"), 403)
    assert prefixed(account, key=key).get("/roles").json == account.api.get("/roles").json

    collaborator_id = other_account.api.get("/collaborators").json[0]["userId"]
    assert other_account.api.delete(f"/collaborators/{collaborator_id}").status == 204
    assert_refused(in_other.get("/roles"), 404)


# Error bodies


@pytest.mark.parametrize("route", WRITE_ROUTES, ids=route_id)
@pytest.mark.parametrize("raw", [b'{"name": ', b"{'name': 'x'}", b"name=x", b"\xff\xfe\xfd"], ids=repr)
def test_a_body_that_is_not_json_is_refused_with_a_message(
    shared_account: Account, route: tuple[str, str], raw: bytes
) -> None:
    assert_refused(shared_account.api.call(route[0], route[1], raw=raw), 400)


@pytest.mark.parametrize("route", WRITE_ROUTES, ids=route_id)
@pytest.mark.parametrize("body", [[], [{"name": "x"}], "x", 5, True, None], ids=repr)
def test_a_json_body_that_is_not_an_object_is_refused_with_a_message(
    shared_account: Account, route: tuple[str, str], body: Any
) -> None:
    assert_refused(shared_account.api.call(route[0], route[1], raw=json.dumps(body).encode()), 400)


WRONG_TYPES: dict[str, tuple[str, str, Callable[[Account], dict[str, Any]], str]] = {
    "POST /users roleId 'abc'": (
        "POST",
        "/users",
        lambda account: {"fullName": "Pat", "email": "pat@team.example", "roleId": "abc", "generatePassword": True},
        "roleId",
    ),
    "POST /users generatePassword 'yes'": (
        "POST",
        "/users",
        lambda account: {
            "fullName": "Pat",
            "email": "pat@team.example",
            "roleId": account.role_id("User"),
            "generatePassword": "yes",
        },
        "generatePassword",
    ),
    "POST /users email 5": (
        "POST",
        "/users",
        lambda account: {"fullName": "Pat", "email": 5, "roleId": account.role_id("User"), "generatePassword": True},
        "email",
    ),
    "POST /users roleId 1.5": (
        "POST",
        "/users",
        lambda account: {"fullName": "Pat", "email": "pat@team.example", "roleId": 1.5, "generatePassword": True},
        "roleId",
    ),
    "POST /users roleId true": (
        "POST",
        "/users",
        lambda account: {"fullName": "Pat", "email": "pat@team.example", "roleId": True, "generatePassword": True},
        "roleId",
    ),
    "POST /roles name 5": ("POST", "/roles", lambda account: {"name": 5}, "name"),
    "POST /roles name list": ("POST", "/roles", lambda account: {"name": ["Deployers"]}, "name"),
    "PUT /roles roleId 'abc'": (
        "PUT",
        "/roles",
        lambda account: {"roleId": "abc", "name": "Deployers", "groups": []},
        "roleId",
    ),
    "PUT /users userId 'abc'": (
        "PUT",
        "/users",
        lambda account: {
            "userId": "abc",
            "fullName": "Pat",
            "email": "pat@team.example",
            "roleId": account.role_id("User"),
        },
        "userId",
    ),
    "POST /collaborators roleId 'abc'": (
        "POST",
        "/collaborators",
        lambda account: {"email": "pat@team.example", "roleId": "abc"},
        "roleId",
    ),
    "PUT /collaborators userId 'abc'": (
        "PUT",
        "/collaborators",
        lambda account: {"userId": "abc", "roleId": account.role_id("User")},
        "userId",
    ),
}


@pytest.mark.parametrize("case", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
def test_a_field_of_the_wrong_type_is_refused_naming_the_field(
    shared_account: Account, case: tuple[str, str, Callable[[Account], dict[str, Any]], str]
) -> None:
    method, path, body, field = case
    before = snapshot(shared_account)

    reply = shared_account.api.call(method, path, body(shared_account))

    assert_refused(reply, 400)
    assert field in reply.json["message"]
    assert snapshot(shared_account) == before


@pytest.mark.parametrize(
    "route",
    [("PATCH", "/users"), ("PATCH", "/roles"), ("DELETE", "/users"), ("POST", "/roles/1"), ("PUT", "/collaborators/1")],
    ids=route_id,
)
def test_an_unsupported_method_is_405_with_a_message(shared_account: Account, route: tuple[str, str]) -> None:
    reply = shared_account.api.call(route[0], route[1], {"name": "x"})

    assert_refused(reply, 405)
    assert "Code" not in reply.json and "Message" not in reply.json


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-8", "application/xml", None],
)
def test_a_json_body_is_read_whatever_content_type_is_sent(account: Account, content_type: str | None) -> None:
    headers = {"Authorization": f"Bearer {account.key}"}
    if content_type is not None:
        headers["Content-Type"] = content_type

    added = account.client.http.post("/api/roles", headers=headers, body=json.dumps({"name": "Deployers"}).encode())
    assert added.status_code == 200, added.body
    role = json.loads(added.body)
    role["name"] = "Releasers"
    updated = account.client.http.put("/api/roles", headers=headers, body=json.dumps(role).encode())
    assert updated.status_code == 200, updated.body

    assert [role["name"] for role in account.api.get("/roles").json] == ["Administrator", "User", "Releasers"]


# No client input makes the service fail


def _every_field(**values: Any) -> dict[str, Any]:
    names = (
        "name",
        "fullName",
        "email",
        "roleId",
        "userId",
        "generatePassword",
        "password",
        "confirmPassword",
        "groups",
    )
    return {name: values.get(name, values.get("default")) for name in names}


LONG = "x" * 10_000
JUNK_BODIES: dict[str, bytes] = {
    "no body": b"",
    "whitespace": b"  \n ",
    "null": b"null",
    "empty array": b"[]",
    "string": b'"x"',
    "number": b"1e999",
    "empty object": b"{}",
    "null fields": json.dumps(_every_field(default=None)).encode(),
    "long strings": json.dumps(_every_field(default=LONG, email=LONG + "@x.example")).encode(),
    "long strings, real-looking ids": json.dumps(
        _every_field(default=LONG, email=LONG + "@x.example", roleId=1, userId=1, generatePassword=False, groups=[])
    ).encode(),
    "nested objects": json.dumps(_every_field(default={"a": {"b": [1, {"c": None}]}})).encode(),
    "deeply nested arrays": b"[" * 100_000 + b"]" * 100_000,
    "deeply nested field": b'{"name": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_001,
    "huge ids": json.dumps(
        _every_field(default="", roleId=99999999999999999999, userId=99999999999999999999, groups=[])
    ).encode(),
    "huge ids as strings": json.dumps(
        _every_field(default="", roleId="99999999999999999999", userId="99999999999999999999", groups=[])
    ).encode(),
    "negative ids": json.dumps(
        _every_field(default="", roleId=-5, userId=-5, generatePassword=True, groups=[])
    ).encode(),
    "float ids": json.dumps(_every_field(default="", roleId=1e308, userId=-1.5, groups=[])).encode(),
    "ids of dashes and digits": json.dumps(_every_field(default="", roleId="--1", userId="--1", groups=[])).encode(),
    "ids of superscript digits": json.dumps(
        _every_field(default="", roleId="\u00b2", userId="\u00b2", groups=[])
    ).encode(),
    "groups of junk": json.dumps({"roleId": 1, "name": "", "groups": [None, 5, "x"]}).encode(),
    "group without permissions": json.dumps({"roleId": 1, "name": "", "groups": [{"name": "Projects"}]}).encode(),
    "permissions of junk": json.dumps(
        {
            "roleId": 1,
            "name": "",
            "groups": [
                {"name": "Projects", "permissions": [None, {"name": 5}, {"name": "ManageProjects", "allowed": "yes"}]}
            ],
        }
    ).encode(),
    "group name not a string": json.dumps({"roleId": 1, "name": "", "groups": [{"name": ["Projects"]}]}).encode(),
    "NUL characters": json.dumps(_every_field(default="\x00", roleId=1, userId=1)).encode(),
}


@pytest.mark.parametrize("junk", JUNK_BODIES.keys())
@pytest.mark.parametrize("route", WRITE_ROUTES, ids=route_id)
def test_junk_bodies_are_refused_with_a_message_never_a_server_error(
    shared_account: Account, route: tuple[str, str], junk: str
) -> None:
    reply = shared_account.api.call(route[0], route[1], raw=JUNK_BODIES[junk])

    assert 400 <= reply.status < 500, reply.body
    assert_refused(reply, reply.status)


JUNK_IDS = [
    "99999999999999999999",
    "9" * 400,
    "-1",
    "0",
    "abc",
    "1.5",
    "1e3",
    "0x10",
    " 1",
    "%00",
    "\u00b2",
    "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669\u0660\u0661\u0662\u0663\u0664\u0665\u0666",
]


@pytest.mark.parametrize("junk_id", JUNK_IDS, ids=repr)
@pytest.mark.parametrize("route", ID_ROUTES, ids=route_id)
def test_junk_ids_in_paths_are_not_found_never_a_server_error(
    shared_account: Account, route: tuple[str, str], junk_id: str
) -> None:
    reply = shared_account.api.call(route[0], route[1].replace("{id}", junk_id))

    assert reply.status < 500, reply.body
    assert_refused(reply, 404)


def test_junk_requests_leave_the_account_unchanged(account: Account) -> None:
    before = snapshot(account)
    for method, path in WRITE_ROUTES:
        for raw in JUNK_BODIES.values():
            account.api.call(method, path, raw=raw)

    assert snapshot(account) == before


# A refused request changes nothing


@dataclass
class Team:
    """An account with a custom role held by a user whose role grants nothing."""

    account: Account
    role: dict[str, Any]
    holder: dict[str, Any]
    holder_api: Caller


@pytest.fixture(scope="module")
def team(client: Client) -> Team:
    """Shared by the refusal tests: each leaves it as it found it, which is what they check."""
    account = new_account(client)
    role = account.add_role("Keepers")
    holder = new_user(account, role="Keepers")
    return Team(account, role, holder, account.caller_for(holder["email"]))


def _everything(role: dict[str, Any]) -> dict[str, Any]:
    changed = json.loads(json.dumps(role))
    for group in changed["groups"]:
        for permission in group["permissions"]:
            permission["allowed"] = True
    return changed


REFUSALS: dict[str, tuple[int, Callable[[Team], Reply]]] = {
    "add role without name": (400, lambda t: t.account.api.post("/roles", {})),
    "add role with taken name": (409, lambda t: t.account.api.post("/roles", {"name": "administrator"})),
    "update role with unknown permission": (
        400,
        lambda t: t.account.api.put(
            "/roles",
            {
                **_everything(t.role),
                "groups": [{"name": "Projects", "permissions": [{"name": "Fly", "allowed": True}]}],
            },
        ),
    ),
    "rename role to a taken name": (
        409,
        lambda t: t.account.api.put("/roles", {**_everything(t.role), "name": "User"}),
    ),
    "update built-in role": (
        409,
        lambda t: t.account.api.put(
            "/roles", _everything(t.account.api.get(f"/roles/{t.account.role_id('User')}").json)
        ),
    ),
    "delete built-in role": (409, lambda t: t.account.api.delete(f"/roles/{t.account.role_id('User')}")),
    "delete role held by a user": (409, lambda t: t.account.api.delete(f"/roles/{t.role['roleId']}")),
    "add role without permission": (403, lambda t: t.holder_api.post("/roles", {"name": "Sneaky"})),
    "update role without permission": (403, lambda t: t.holder_api.put("/roles", _everything(t.role))),
    "delete role without permission": (403, lambda t: t.holder_api.delete(f"/roles/{t.role['roleId']}")),
    "add user without permission": (
        403,
        lambda t: t.holder_api.post(
            "/users", {"fullName": "X", "email": "x@team.example", "roleId": t.role["roleId"], "generatePassword": True}
        ),
    ),
    "promote oneself without permission": (
        403,
        lambda t: t.holder_api.put("/users", user_change(t.holder, roleId=t.account.role_id("Administrator"))),
    ),
    "delete user without permission": (403, lambda t: t.holder_api.delete(f"/users/{t.holder['userId']}")),
    "add collaborator without permission": (
        403,
        lambda t: t.holder_api.post("/collaborators", {"email": "x@elsewhere.example", "roleId": t.role["roleId"]}),
    ),
    "add user with role id 'abc'": (
        400,
        lambda t: t.account.api.post(
            "/users", {"fullName": "X", "email": "x@team.example", "roleId": "abc", "generatePassword": True}
        ),
    ),
    "delete the owner": (
        409,
        lambda t: t.account.api.delete(
            f"/users/{next(u['userId'] for u in t.account.api.get('/users').json if u['isOwner'])}"
        ),
    ),
}


@pytest.mark.parametrize("refusal", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_request_changes_nothing(team: Team, refusal: tuple[int, Callable[[Team], Reply]]) -> None:
    status, attempt = refusal
    before = snapshot(team.account)

    reply = attempt(team)

    assert_refused(reply, status)
    assert snapshot(team.account) == before
