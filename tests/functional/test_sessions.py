"""Signing in to the dashboard: the session cookie, its flags, its end, and the same permission checks as a key."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from chalice.test import Client

from chalicelib.api import sessions as session_views
from chalicelib.api.cookies import SESSION_COOKIE, session_cookie
from chalicelib.core.accounts import Account as StoredAccount
from chalicelib.core.api_keys import ApiKey
from chalicelib.core.sessions import Session
from chalicelib.domain.shared.warm_cache import forget_everything
from chalicelib.domain.team import keys_and_passwords, sessions
from chalicelib.store.accounts import get_account_by_name
from chalicelib.store.api_keys import get_api_key, key_hash
from chalicelib.store.models import SessionModel
from chalicelib.store.sessions import add_session
from tests.support import Account, Caller, Reply, in_parallel, member_of_role, unique, view_answer

PASSWORD = "correct horse battery staple"
NEW_PASSWORD = "a new one, quite long"
CSRF = {"X-Requested-With": "conveyor-dashboard"}


def add_user_with_password(account: Account, role: str = "User") -> str:
    email = f"{unique('signer')}@team.example"
    reply = account.api.post(
        "/users",
        {
            "fullName": "Signer",
            "email": email,
            "roleId": account.role_id(role),
            "password": PASSWORD,
            "confirmPassword": PASSWORD,
        },
    )
    assert reply.status == 204, reply.body
    return email


@pytest.fixture(autouse=True)
def one_failure_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test counts its failed sign-ins in the window it started in: one that ran across a window's end (every
    15 minutes, by the clock) would find its counts gone halfway (seen once in make test, at 11:00:03)."""
    pin_failure_window(monkeypatch)


def pin_failure_window(monkeypatch: pytest.MonkeyPatch) -> None:
    window = sessions.failure_window()
    monkeypatch.setattr(sessions, "failure_window", lambda: window)


def sign_in(client: Client, email: str, password: str = PASSWORD, **extra: str) -> Reply:
    return Caller(client, None).post("/session", {"email": email, "password": password, **extra}, headers=CSRF)


def cookie_attributes(reply: Reply) -> tuple[str, dict[str, str]]:
    """The session cookie's value and its attributes (lower-cased names; flags map to "")."""
    first, *rest = [part.strip() for part in reply.headers["Set-Cookie"].split(";")]
    name, _, value = first.partition("=")
    assert name == SESSION_COOKIE
    attributes = {}
    for part in rest:
        key, _, attribute = part.partition("=")
        attributes[key.lower()] = attribute
    return value, attributes


def cookie_caller(client: Client, token: str, prefix: str = "/api") -> Caller:
    """Calls with the session cookie only, as the dashboard's page does."""
    return CookieCaller(client, None, prefix, token)


class CookieCaller(Caller):
    def __init__(self, client: Client, key: None, prefix: str, token: str) -> None:
        super().__init__(client, key, prefix)
        self.token = token

    def call(self, method: str, path: str, body: object = None, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> Reply:  # fmt: skip
        return super().call(method, path, body, raw, {"Cookie": f"{SESSION_COOKIE}={self.token}", **(headers or {})})


def signed_in(client: Client, email: str) -> Caller:
    reply = sign_in(client, email)
    assert reply.status == 204, reply.body
    return cookie_caller(client, cookie_attributes(reply)[0])


def test_sign_in_sets_an_httponly_samesite_cookie_for_the_api_that_expires(account: Account, client: Client) -> None:
    reply = sign_in(client, add_user_with_password(account))

    assert reply.status == 204, reply.body
    token, attributes = cookie_attributes(reply)
    assert len(token) >= 40
    assert attributes["httponly"] == "" and attributes["samesite"] == "Strict" and attributes["path"] == "/api"
    assert attributes["max-age"] == str(12 * 3600)
    expires = datetime.strptime(attributes["expires"], "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    assert timedelta(hours=11) < expires - datetime.now(UTC) <= timedelta(hours=12)
    assert "secure" not in attributes  # the local stage serves plain HTTP on loopback
    assert reply.headers["Cache-Control"] == "no-store"


def test_the_cookie_is_secure_outside_the_local_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_STAGE", "prod")

    assert "; Secure" in session_cookie("token", datetime.now(UTC), 60)


def test_the_session_is_stored_as_the_hash_of_its_token_only(account: Account, client: Client) -> None:
    token, _ = cookie_attributes(sign_in(client, add_user_with_password(account)))

    stored = SessionModel.get(key_hash(token))

    assert token not in str(stored.attribute_values)
    assert stored.expires > datetime.now(UTC)


def test_the_cookie_acts_as_its_user_in_its_account(account: Account, client: Client) -> None:
    email = add_user_with_password(account)
    caller = signed_in(client, email)

    me = caller.get("/caller")

    assert me.status == 200, me.body
    assert (me.json["email"], me.json["accountName"], me.json["roleName"]) == (email, account.name, "User")
    assert caller.get("/roles").status == 200
    own_prefix = cookie_caller(client, caller.token, f"/api/account/{account.name}")  # type: ignore[attr-defined]
    assert own_prefix.get("/roles").status == 200


def test_the_cookie_finds_nothing_under_another_accounts_prefix(
    account: Account, other_account: Account, client: Client
) -> None:
    caller = signed_in(client, add_user_with_password(account))

    reply = cookie_caller(client, caller.token, f"/api/account/{other_account.name}").get("/roles")  # type: ignore[attr-defined]

    assert reply.status == 404, reply.body


@pytest.mark.parametrize("wrong", ["password", "email", "account"])
def test_a_wrong_email_password_or_account_is_401_without_saying_which(
    account: Account, client: Client, wrong: str
) -> None:
    email = add_user_with_password(account)
    body = {"email": email, "password": PASSWORD, "accountName": account.name}
    body[{"password": "password", "email": "email", "account": "accountName"}[wrong]] = "not-it-at-all"

    reply = Caller(client, None).post("/session", body, headers=CSRF)

    assert reply.status == 401, reply.body
    assert reply.json == {"message": "The e-mail address or the password is not right."}
    assert "Set-Cookie" not in reply.headers


@pytest.mark.parametrize("email", ["", " ", "not an address"])
def test_an_empty_or_malformed_email_is_a_401_like_any_wrong_one(client: Client, email: str) -> None:
    reply = Caller(client, None).post("/session", {"email": email, "password": "x", "accountName": ""}, headers=CSRF)

    assert reply.status == 401, reply.body  # found by the fuzzer: an empty e-mail was a 500 (an empty index key)


def test_an_owner_without_a_password_cannot_sign_in(account: Account, client: Client) -> None:
    assert sign_in(client, account.owner_email, "").status == 401
    assert sign_in(client, account.owner_email, PASSWORD).status == 401


def test_signing_in_needs_the_csrf_header(account: Account, client: Client) -> None:
    email = add_user_with_password(account)

    reply = Caller(client, None).post("/session", {"email": email, "password": PASSWORD})

    assert reply.status == 403, reply.body
    assert "X-Requested-With" in reply.json["message"]


def test_a_signed_out_cookie_is_refused(account: Account, client: Client) -> None:
    caller = signed_in(client, add_user_with_password(account))
    assert caller.get("/roles").status == 200

    out = caller.delete("/session", headers=CSRF)

    assert out.status == 204, out.body
    assert cookie_attributes(out)[1]["max-age"] == "0"
    refused = caller.get("/roles")
    assert refused.status == 401
    assert refused.json == {"message": "Authorization required"}


def test_signing_out_by_cookie_needs_the_csrf_header(account: Account, client: Client) -> None:
    caller = signed_in(client, add_user_with_password(account))

    assert caller.delete("/session").status == 403
    assert caller.get("/roles").status == 200


def test_an_expired_session_is_refused(account: Account, client: Client) -> None:
    user_id = next(user["userId"] for user in account.api.get("/users").json if user["isOwner"])
    account_id = account.api.get("/users").json[0]["accountId"]
    now = datetime.now(UTC)
    token = unique("expired-token")
    add_session(
        token, Session(account_id, account.name, user_id, now - timedelta(hours=13), now - timedelta(seconds=1))
    )

    reply = cookie_caller(client, token).get("/roles")

    assert reply.status == 401, reply.body


def test_an_unknown_cookie_is_refused(client: Client) -> None:
    assert cookie_caller(client, "no-such-session").get("/roles").status == 401


def test_a_deleted_users_session_is_refused(account: Account, client: Client) -> None:
    email = add_user_with_password(account)
    caller = signed_in(client, email)
    user_id = next(user["userId"] for user in account.api.get("/users").json if user["email"] == email)

    assert account.api.delete(f"/users/{user_id}").status == 204

    assert caller.get("/roles").status == 401


def test_a_write_by_cookie_needs_the_csrf_header(account: Account, client: Client) -> None:
    caller = signed_in(client, add_user_with_password(account, role="Administrator"))

    refused = caller.post("/roles", {"name": unique("role")})
    allowed = caller.post("/roles", {"name": unique("role")}, headers=CSRF)

    assert refused.status == 403, refused.body
    assert "X-Requested-With" in refused.json["message"]
    assert allowed.status == 200, allowed.body


def test_a_write_with_a_key_needs_no_csrf_header_even_beside_a_cookie(account: Account, client: Client) -> None:
    caller = signed_in(client, add_user_with_password(account))
    headers = {"Cookie": f"{SESSION_COOKIE}={caller.token}"}  # type: ignore[attr-defined]

    assert account.api.post("/roles", {"name": unique("role")}, headers=headers).status == 200


def test_a_user_roles_cookie_gets_the_same_403_as_its_key(account: Account, client: Client) -> None:
    email = add_user_with_password(account)
    by_cookie = signed_in(client, email)
    by_key = account.caller_for(email)

    replies = [caller.post("/roles", {"name": unique("role")}, headers=CSRF) for caller in (by_cookie, by_key)]

    assert [reply.status for reply in replies] == [403, 403]
    assert replies[0].json == replies[1].json
    assert [role["name"] for role in by_cookie.get("/roles").json] == ["Administrator", "User"]


def test_the_caller_of_a_key_is_its_user(account: Account) -> None:
    me = account.api.get("/caller")

    assert me.status == 200, me.body
    assert me.json["email"] == account.owner_email
    assert me.json["roleName"] == "Administrator"
    assert "AddUser" in me.json["permissions"]
    assert view_answer(account, session_views.get_caller, "/api/caller") == me.json  # GET /caller's view
    assert get_api_key(account.key) == ApiKey(me.json["userId"], me.json["accountId"], account.name)  # as stored
    stored = get_account_by_name(account.name)
    assert isinstance(stored, StoredAccount) and stored.account_id == me.json["accountId"]


def test_member_of_user_role_sees_its_permissions(account: Account) -> None:
    me = member_of_role(account, "User").get("/caller").json

    assert me["roleName"] == "User"
    assert "AddUser" not in me["permissions"]


def test_session_responses_match_their_documented_shapes(account: Account, client: Client) -> None:
    from tests.functional.test_openapi import assert_conforms

    email = add_user_with_password(account)
    assert_conforms(sign_in(client, email), "POST /session")
    assert_conforms(sign_in(client, email, "wrong password"), "POST /session")  # 401
    assert_conforms(Caller(client, None).post("/session", {"email": email}), "POST /session")  # 403
    assert_conforms(signed_in(client, email).get("/caller"), "GET /caller")
    assert_conforms(Caller(client, None).get("/caller"), "GET /caller")  # 401
    assert_conforms(Caller(client, None).delete("/session", headers=CSRF), "DELETE /session")


def test_a_new_password_ends_the_sessions_begun_with_the_old_one(account: Account, client: Client) -> None:
    email = add_user_with_password(account)
    caller = signed_in(client, email)
    user = next(user for user in account.api.get("/users").json if user["email"] == email)
    kept = {name: user[name] for name in ("userId", "fullName", "email", "roleId")}
    assert account.api.put("/users", {**kept, "fullName": "Renamed"}).status == 204
    assert caller.get("/roles").status == 200  # other changes to the user keep the session

    changed = account.api.put("/users", {**kept, "password": NEW_PASSWORD})

    assert changed.status == 204, changed.body
    forget_everything()  # as another warm function would have, within seconds
    assert caller.get("/roles").status == 401
    assert sign_in(client, email, NEW_PASSWORD).status == 204


def test_ten_failed_sign_ins_with_an_address_refuse_it_with_429_until_the_window_ends(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    email, other = add_user_with_password(account), add_user_with_password(account)
    unknown = f"{unique('nobody')}@team.example"
    for address in (email, unknown):
        for _ in range(sessions.MAX_FAILED_SIGN_INS):
            assert sign_in(client, address, "a wrong guess").status == 401

    refused, refused_unknown = sign_in(client, email), sign_in(client, unknown)

    assert refused.status == 429, refused.body
    assert refused.json["message"].startswith("Too many failed sign-ins with this address: try again in")
    assert "Set-Cookie" not in refused.headers
    assert refused_unknown.status == 429 and refused_unknown.json == refused.json  # an unknown address alike
    assert sign_in(client, other).status == 204  # other addresses are not held back
    window, ends = sessions.failure_window()
    monkeypatch.setattr(sessions, "failure_window", lambda: (window + 1, ends + timedelta(minutes=15)))
    assert sign_in(client, email).status == 204


def test_forty_wrong_passwords_at_once_get_no_more_401s_than_the_limit(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request is held at its password check until every other one has reached its own or been answered: a
    limit read before the check and counted after it lets all forty through."""
    email = add_user_with_password(account)
    attempts = 4 * sessions.MAX_FAILED_SIGN_INS
    settled = threading.Condition()
    checking, answered = [0], [0]
    check = keys_and_passwords.password_matches

    def check_once_every_request_got_this_far(password: str, stored: str) -> bool:
        with settled:
            checking[0] += 1
            settled.notify_all()
            settled.wait_for(lambda: checking[0] + answered[0] >= attempts, timeout=20)
        return check(password, stored)

    def wrong_guess() -> Reply:
        try:
            return sign_in(client, email, "a wrong guess")
        finally:
            with settled:
                answered[0] += 1
                settled.notify_all()

    monkeypatch.setattr(keys_and_passwords, "password_matches", check_once_every_request_got_this_far)
    replies = in_parallel([wrong_guess] * attempts)

    statuses = sorted(reply.status for reply in replies)
    assert statuses == [401] * sessions.MAX_FAILED_SIGN_INS + [429] * (attempts - sessions.MAX_FAILED_SIGN_INS)
    assert checking[0] == sessions.MAX_FAILED_SIGN_INS  # a refused guess never reaches the password
    monkeypatch.undo()
    assert sign_in(client, email).status == 429


def from_address(client: Client, monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    """The test client's requests come from ``address`` from now on (Chalice's local gateway says 127.0.0.1 as
    API Gateway's ``identity.sourceIp``) until the test ends."""
    monkeypatch.setattr(client.http._local_gateway.event_converter, "LOCAL_SOURCE_IP", address)  # type: ignore[attr-defined]


def test_ten_wrong_passwords_from_one_client_do_not_lock_the_owner_out_from_another(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    email = add_user_with_password(account)
    from_address(client, monkeypatch, "203.0.113.7")
    for _ in range(sessions.MAX_FAILED_SIGN_INS):
        assert sign_in(client, email, "a wrong guess").status == 401
    assert sign_in(client, email).status == 429  # the guesser's address is held back

    from_address(client, monkeypatch, "198.51.100.20")
    assert sign_in(client, email).status == 204  # the owner, elsewhere, is not

    from_address(client, monkeypatch, "203.0.113.7")
    assert sign_in(client, email, "a wrong guess").status == 429


def test_wrong_passwords_from_many_clients_stop_at_the_limit_for_the_address_everywhere(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    email = add_user_with_password(account)
    clients = sessions.MAX_FAILED_SIGN_INS_EVERYWHERE // sessions.MAX_FAILED_SIGN_INS
    for index in range(clients):
        from_address(client, monkeypatch, f"192.0.2.{index + 1}")
        for _ in range(sessions.MAX_FAILED_SIGN_INS):
            assert sign_in(client, email, "a wrong guess").status == 401

    from_address(client, monkeypatch, "198.51.100.30")
    first_guess = sign_in(client, email, "a wrong guess")  # a new client guesses once a window, and no more
    refused = sign_in(client, email)

    assert first_guess.status == 401, first_guess.body
    assert refused.status == 429, refused.body
    assert refused.json["message"].startswith("Too many failed sign-ins with this address from many places")
    assert sign_in(client, email, "a wrong guess").status == 429
    window, ends = sessions.failure_window()
    monkeypatch.setattr(sessions, "failure_window", lambda: (window + 1, ends + timedelta(minutes=15)))
    assert sign_in(client, email).status == 204


def test_wrong_passwords_from_ten_clients_do_not_lock_the_owner_out_from_a_new_address(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    email = add_user_with_password(account)
    clients = sessions.MAX_FAILED_SIGN_INS_EVERYWHERE // sessions.MAX_FAILED_SIGN_INS
    for index in range(clients):
        from_address(client, monkeypatch, f"192.0.2.{index + 1}")
        for _ in range(sessions.MAX_FAILED_SIGN_INS):
            assert sign_in(client, email, "a wrong guess").status == 401

    from_address(client, monkeypatch, "198.51.100.40")
    owner = sign_in(client, email)  # the right password, from where nobody guessed
    again = sign_in(client, email)  # a success is not counted as a failure of that client

    assert owner.status == 204, owner.body
    assert again.status == 204, again.body
    from_address(client, monkeypatch, "192.0.2.1")
    assert sign_in(client, email).status == 429  # a guesser's own address stays held back


def test_a_network_that_used_its_guesses_past_the_limit_does_not_lock_the_owner_out_from_another(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    email = add_user_with_password(account)
    for index in range(sessions.MAX_FAILED_SIGN_INS_EVERYWHERE // sessions.MAX_FAILED_SIGN_INS):
        from_address(client, monkeypatch, f"192.0.2.{index + 1}")
        for _ in range(sessions.MAX_FAILED_SIGN_INS):
            assert sign_in(client, email, "a wrong guess").status == 401
    for index in range(sessions.MAX_FAILED_SIGN_INS):  # each new client of one /24: one guess
        from_address(client, monkeypatch, f"203.0.113.{index + 1}")
        assert sign_in(client, email, "a wrong guess").status == 401
    from_address(client, monkeypatch, "203.0.113.200")
    held = sign_in(client, email)  # the network's guesses are used up: even the right password waits

    from_address(client, monkeypatch, "198.51.100.40")
    owner = sign_in(client, email)

    assert held.status == 429, held.body
    assert owner.status == 204, owner.body


def test_guesses_at_once_from_a_new_client_past_the_limit_everywhere_get_one_password_check(
    account: Account, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    email = add_user_with_password(account)
    for index in range(sessions.MAX_FAILED_SIGN_INS_EVERYWHERE // sessions.MAX_FAILED_SIGN_INS):
        from_address(client, monkeypatch, f"192.0.2.{index + 1}")
        for _ in range(sessions.MAX_FAILED_SIGN_INS):
            assert sign_in(client, email, "a wrong guess").status == 401
    from_address(client, monkeypatch, "198.51.100.50")

    replies = in_parallel([lambda: sign_in(client, email, "a wrong guess")] * sessions.MAX_FAILED_SIGN_INS)

    statuses = sorted(reply.status for reply in replies)
    assert statuses == [401] + [429] * (sessions.MAX_FAILED_SIGN_INS - 1)  # its count is its first for one only
    assert sign_in(client, email).status == 429


@pytest.mark.parametrize(
    ("guesser", "same_client", "another_client"),
    [
        ("2001:db8:5:6::1", "2001:db8:5:6:ffff::9", "2001:db8:5:7::1"),  # an IPv6 client holds its /64
        ("::ffff:203.0.113.8", "203.0.113.8", "203.0.113.9"),  # an IPv4 address is one, however written
    ],
)
def test_the_addresses_of_one_client_share_its_limit(
    account: Account,
    client: Client,
    monkeypatch: pytest.MonkeyPatch,
    guesser: str,
    same_client: str,
    another_client: str,
) -> None:
    email = add_user_with_password(account)
    from_address(client, monkeypatch, guesser)
    for _ in range(sessions.MAX_FAILED_SIGN_INS):
        assert sign_in(client, email, "a wrong guess").status == 401

    from_address(client, monkeypatch, same_client)
    assert sign_in(client, email).status == 429
    from_address(client, monkeypatch, another_client)
    assert sign_in(client, email).status == 204


def test_successful_sign_ins_do_not_count_against_the_limit(account: Account, client: Client) -> None:
    email = add_user_with_password(account)
    for _ in range(sessions.MAX_FAILED_SIGN_INS):
        assert sign_in(client, email).status == 204

    assert sign_in(client, email, "a wrong guess").status == 401
