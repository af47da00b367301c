"""Deployment environments: adding, reading, updating and deleting them; their secrets, which go in as plain
text and come out only as tokens; their access key, shown in plain text only when it is made, and afterwards as a
token to environment managers only; who may change them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from chalicelib.api import environments as environment_views
from chalicelib.core.environments import Environment
from chalicelib.domain.deployments.environments import environment_values, find_environment_by_access_key
from chalicelib.domain.shared import secrets
from chalicelib.errors import Conflict
from chalicelib.store import environments as environment_store
from chalicelib.store.accounts import get_account_by_name
from chalicelib.store.delivery_models import EnvironmentModel
from tests.support import Account, Caller, Reply, assert_refused, member_of_role, view_answer

# The provider names of the contract, in its spelling.
PROVIDERS = [
    "Agent",
    "AzureBlob",
    "AzureCS",
    "AzureWebJob",
    "BinTray",
    "FTP",
    "GitHub",
    "NuGet",
    "S3",
    "SqlDatabase",
    "WebDeploy",
    "Webhook",
]
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00$")
NOT_FOUND = {"message": "Environment not found or access denied."}
SUMMARY_KEYS = {"deploymentEnvironmentId", "name", "provider", "created"}
DETAILS_KEYS = SUMMARY_KEYS | {"environmentAccessKey", "settings"}
PASSWORD = "ftp-password-plain"
TOKEN_VALUE = "deploy-token-plain"


def named(name: str, value: str, secure: bool = False) -> dict[str, Any]:
    return {"name": name, "value": {"isEncrypted": secure, "value": value}}


def ftp_body(name: str = "Production FTP", password: str = PASSWORD, **fields: Any) -> dict[str, Any]:
    """A POST body for an FTP environment with one secret setting and one secret variable."""
    return {
        "name": name,
        "provider": "FTP",
        "settings": {
            "providerSettings": [named("server", "ftp.example.com"), named("password", password, secure=True)],
            "environmentVariables": [named("STAGE", "production"), named("TOKEN", TOKEN_VALUE, secure=True)],
        },
        **fields,
    }


def add(account: Account, body: dict[str, Any] | None = None, caller: Caller | None = None) -> Reply:
    return (caller or account.api).post("/environments", ftp_body() if body is None else body)


def added(account: Account, body: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = add(account, body)
    assert reply.status == 200, reply.body
    return reply.json


def settings_path(environment: dict[str, Any]) -> str:
    return f"/environments/{environment['deploymentEnvironmentId']}/settings"


def read(caller: Caller, environment: dict[str, Any]) -> dict[str, Any]:
    """The environment as GET .../settings shows it to ``caller``."""
    reply = caller.get(settings_path(environment))
    assert reply.status == 200, reply.body
    assert set(reply.json) == {"environment"}
    return reply.json["environment"]


def update(caller: Caller, environment: dict[str, Any], **changes: Any) -> Reply:
    """PUT the environment (as read) with ``changes`` applied."""
    return caller.put("/environments", {**copy.deepcopy(environment), **changes})


def listed(account: Account) -> list[dict[str, Any]]:
    reply = account.api.get("/environments")
    assert reply.status == 200, reply.body
    assert view_answer(account, environment_views.list_environments, "/api/environments") == reply.json  # its view
    return reply.json


def value_of(values: list[dict[str, Any]], name: str) -> dict[str, Any]:
    value: dict[str, Any] = next(entry for entry in values if entry["name"] == name)["value"]
    return value


def stored(account: Account, environment: dict[str, Any]) -> Environment:
    """The environment as the store holds it."""
    account_record = get_account_by_name(account.name)
    assert account_record is not None
    found = environment_store.get_environment(account_record.account_id, environment["deploymentEnvironmentId"])
    assert found is not None
    return found


def stored_item(account: Account, environment: dict[str, Any]) -> str:
    """The environment's DynamoDB item, as text."""
    found = stored(account, environment)
    return str(EnvironmentModel.get(found.account_id, found.environment_id).serialize())


def assert_opaque(token: str, plain: str) -> None:
    assert isinstance(token, str) and token.startswith(secrets.TOKEN_PREFIX)
    assert plain not in token


@pytest.fixture
def created(account: Account) -> dict[str, Any]:
    """A new FTP environment as its add response showed it: the one response with the access key in plain text."""
    return added(account)


@pytest.fixture
def environment(account: Account, created: dict[str, Any]) -> dict[str, Any]:
    """The FTP environment as its settings show it to an administrator: the access key as its token."""
    return read(account.api, created)


@pytest.fixture
def access_key(created: dict[str, Any]) -> str:
    """The environment's access key, in plain text."""
    key: str = created["environmentAccessKey"]
    return key


# Adding and reading


def test_added_environment_shows_its_settings_access_key_and_creation_time(account: Account) -> None:
    reply = add(account)

    assert reply.status == 200, reply.body
    environment = reply.json
    assert set(environment) == DETAILS_KEYS
    assert isinstance(environment["deploymentEnvironmentId"], int)
    assert (environment["name"], environment["provider"]) == ("Production FTP", "FTP")
    assert TIMESTAMP.match(environment["created"])
    assert isinstance(environment["environmentAccessKey"], str) and len(environment["environmentAccessKey"]) >= 16
    settings = environment["settings"]
    assert set(settings) == {"providerSettings", "environmentVariables", "notifications", "inlineDeploymentProjectIds"}
    assert [entry["name"] for entry in settings["providerSettings"]] == ["server", "password"]
    assert value_of(settings["providerSettings"], "server") == {"isEncrypted": False, "value": "ftp.example.com"}
    assert value_of(settings["providerSettings"], "password")["isEncrypted"] is True
    assert_opaque(value_of(settings["providerSettings"], "password")["value"], PASSWORD)
    assert value_of(settings["environmentVariables"], "STAGE") == {"isEncrypted": False, "value": "production"}
    assert_opaque(value_of(settings["environmentVariables"], "TOKEN")["value"], TOKEN_VALUE)
    assert settings["notifications"] == []
    assert settings["inlineDeploymentProjectIds"] == []  # no project's appveyor.yml deploys here unless listed


def test_settings_show_the_environment_as_it_was_added_with_its_access_key_as_a_token(
    account: Account, created: dict[str, Any], access_key: str
) -> None:
    shown = read(account.api, created)

    assert shown == {**created, "environmentAccessKey": shown["environmentAccessKey"]}
    assert_opaque(shown["environmentAccessKey"], access_key)
    assert read(account.api, created) == shown


def test_list_shows_each_environment_as_a_summary_in_the_order_added(account: Account) -> None:
    first = added(account, ftp_body("First"))
    second = added(
        account, {"name": "Second", "provider": "S3", "settings": {"providerSettings": [], "environmentVariables": []}}
    )

    environments = listed(account)

    assert environments == [
        {key: first[key] for key in SUMMARY_KEYS},
        {key: second[key] for key in SUMMARY_KEYS},
    ]
    assert first["deploymentEnvironmentId"] != second["deploymentEnvironmentId"]


def test_an_account_without_environments_lists_none(account: Account) -> None:
    assert listed(account) == []


def test_every_provider_of_the_contract_can_be_added(account: Account) -> None:
    for provider in PROVIDERS:
        body = {
            "name": f"{provider} target",
            "provider": provider,
            "settings": {"providerSettings": [], "environmentVariables": []},
        }
        assert added(account, body)["provider"] == provider
    assert [environment["provider"] for environment in listed(account)] == PROVIDERS


@pytest.mark.parametrize(("sent", "kept"), [("ftp", "FTP"), ("azureblob", "AzureBlob"), ("WEBHOOK", "Webhook")])
def test_a_provider_in_another_case_is_stored_in_its_canonical_spelling(account: Account, sent: str, kept: str) -> None:
    assert added(account, {**ftp_body(), "provider": sent})["provider"] == kept


@pytest.mark.parametrize("provider", ["Octopus", "Environment", "Local", "", "F T P"])
def test_an_unknown_provider_is_refused_naming_the_allowed_ones(account: Account, provider: str) -> None:
    reply = add(account, {**ftp_body(), "provider": provider})

    assert_refused(reply, 400)
    assert all(name in reply.json["message"] for name in PROVIDERS)
    assert "request.provider" in reply.json["modelState"]
    assert listed(account) == []


def test_notifications_are_kept_with_their_secrets_as_tokens(account: Account) -> None:
    body = ftp_body()
    body["settings"]["notifications"] = [
        {
            "provider": "Webhook",
            "url": "https://hooks.example.com/deploy",
            "headers": {"Authorization": {"secure": "notify-plain"}},
        }
    ]

    environment = added(account, body)

    notification = environment["settings"]["notifications"][0]
    assert notification["url"] == "https://hooks.example.com/deploy"
    assert_opaque(notification["headers"]["Authorization"]["secure"], "notify-plain")
    assert "notify-plain" not in stored_item(account, environment)


def test_an_encrypted_value_left_empty_is_stored_without_a_value(account: Account) -> None:
    body = ftp_body()
    body["settings"]["environmentVariables"] = [named("EMPTY", "", secure=True)]

    environment = added(account, body)

    assert environment["settings"]["environmentVariables"] == [{"name": "EMPTY", "value": {"isEncrypted": True}}]
    assert environment_values(stored(account, environment))[1] == {"EMPTY": ""}


# Names


@pytest.mark.parametrize("taken", ["Production FTP", "production ftp", "PRODUCTION FTP", "  Production FTP  "])
def test_a_name_already_taken_in_any_case_is_a_conflict(
    account: Account, environment: dict[str, Any], taken: str
) -> None:
    assert_refused(add(account, ftp_body(taken)), 409)
    assert listed(account) == [{key: environment[key] for key in SUMMARY_KEYS}]


def test_the_same_name_can_be_used_in_two_accounts(
    account: Account, other_account: Account, environment: dict[str, Any]
) -> None:
    assert add(other_account, ftp_body(environment["name"])).status == 200


def test_a_name_is_stored_without_surrounding_spaces(account: Account) -> None:
    assert added(account, ftp_body("  Staging  "))["name"] == "Staging"


def test_renaming_frees_the_old_name(account: Account, environment: dict[str, Any]) -> None:
    reply = update(account.api, environment, name="Renamed FTP")

    assert reply.status == 200, reply.body
    assert reply.json["name"] == "Renamed FTP"
    assert [entry["name"] for entry in listed(account)] == ["Renamed FTP"]
    assert add(account, ftp_body("Production FTP")).status == 200
    assert_refused(add(account, ftp_body("renamed ftp")), 409)


def test_an_environment_can_be_renamed_to_its_own_name_in_another_case(
    account: Account, environment: dict[str, Any]
) -> None:
    assert update(account.api, environment, name="PRODUCTION FTP").status == 200

    assert [entry["name"] for entry in listed(account)] == ["PRODUCTION FTP"]


def test_renaming_to_a_name_already_taken_is_a_conflict_and_changes_nothing(
    account: Account, environment: dict[str, Any]
) -> None:
    added(account, ftp_body("Staging"))

    assert_refused(update(account.api, environment, name="staging", provider="S3"), 409)

    assert read(account.api, environment) == environment
    assert add(account, ftp_body("Production FTP")).status == 409


# Updating


def test_update_changes_settings_and_marks_the_environment_updated(
    account: Account, environment: dict[str, Any]
) -> None:
    settings = copy.deepcopy(environment["settings"])
    settings["providerSettings"][0] = named("server", "ftp2.example.com")
    settings["environmentVariables"].append(named("REGION", "eu"))
    kept_tokens = update(account.api, environment, settings=settings)
    settings["providerSettings"][1] = named("password", PASSWORD, secure=True)  # sent again for the new server
    settings["environmentVariables"][1] = named("TOKEN", TOKEN_VALUE, secure=True)

    reply = update(account.api, environment, settings=settings)

    assert kept_tokens.status == 400 and "send its secure values again" in kept_tokens.json["message"]
    assert reply.status == 200, reply.body
    changed = reply.json
    assert set(changed) == DETAILS_KEYS | {"updated"}
    assert changed["created"] == environment["created"]
    assert TIMESTAMP.match(changed["updated"]) and changed["updated"] >= changed["created"]
    assert value_of(changed["settings"]["providerSettings"], "server")["value"] == "ftp2.example.com"
    assert [entry["name"] for entry in changed["settings"]["environmentVariables"]] == ["STAGE", "TOKEN", "REGION"]
    assert read(account.api, environment) == changed
    assert listed(account) == [{key: changed[key] for key in SUMMARY_KEYS | {"updated"}}]


def secrets_sent_again(environment: dict[str, Any]) -> dict[str, Any]:
    """The environment's settings (as ftp_body made them) with its secure values in plain text again, as a change of
    provider needs them."""
    settings = copy.deepcopy(environment["settings"])
    value_of(settings["providerSettings"], "password")["value"] = PASSWORD
    value_of(settings["environmentVariables"], "TOKEN")["value"] = TOKEN_VALUE
    return settings


def test_provider_in_settings_wins_over_the_top_level_one(account: Account, environment: dict[str, Any]) -> None:
    settings = {**secrets_sent_again(environment), "provider": "s3"}

    reply = update(account.api, environment, provider="AzureBlob", settings=settings)

    assert reply.status == 200, reply.body
    assert reply.json["provider"] == "S3"


def test_provider_at_top_level_alone_changes_it(account: Account, environment: dict[str, Any]) -> None:
    reply = update(account.api, environment, provider="Webhook", settings=secrets_sent_again(environment))

    assert reply.status == 200, reply.body
    assert reply.json["provider"] == "Webhook"


def test_update_without_a_provider_keeps_it(account: Account, environment: dict[str, Any]) -> None:
    body = copy.deepcopy(environment)
    del body["provider"]

    reply = account.api.put("/environments", body)

    assert reply.status == 200, reply.body
    assert reply.json["provider"] == "FTP"


def test_update_without_notifications_keeps_them(account: Account) -> None:
    body = ftp_body()
    body["settings"]["notifications"] = [{"provider": "Email", "to": ["ops@example.com"]}]
    environment = added(account, body)
    settings = copy.deepcopy(environment["settings"])
    del settings["notifications"]

    reply = update(account.api, environment, settings=settings)

    assert reply.status == 200, reply.body
    assert reply.json["settings"]["notifications"] == body["settings"]["notifications"]


def test_an_update_from_a_stale_read_is_a_conflict(account: Account, environment: dict[str, Any]) -> None:
    before = stored(account, environment)
    assert update(account.api, environment, name="Changed meanwhile").status == 200

    with pytest.raises(Conflict):
        environment_store.save_environment(before, before)

    assert read(account.api, environment)["name"] == "Changed meanwhile"
    assert update(account.api, environment, name="Changed again").status == 200


def test_a_delete_from_a_stale_read_is_a_conflict(account: Account, environment: dict[str, Any]) -> None:
    before = stored(account, environment)
    assert update(account.api, environment, name="Changed meanwhile").status == 200

    with pytest.raises(Conflict):
        environment_store.delete_environment(before)

    assert read(account.api, environment)["name"] == "Changed meanwhile"


# Secrets


def test_no_response_and_no_stored_item_holds_a_secret(
    account: Account, created: dict[str, Any], environment: dict[str, Any], access_key: str
) -> None:
    member = member_of_role(account, "User")
    replies = [environment, update(account.api, environment, name="Renamed").json]
    for caller in (account.api, member):
        replies += [caller.get("/environments").json, read(caller, environment)]

    assert PASSWORD not in str(created) and TOKEN_VALUE not in str(created)
    for reply in replies:
        assert PASSWORD not in str(reply) and TOKEN_VALUE not in str(reply)
        assert access_key not in str(reply)
    item = stored_item(account, environment)
    assert PASSWORD not in item and TOKEN_VALUE not in item
    assert access_key not in item


def test_putting_back_what_was_read_keeps_the_secrets(account: Account, environment: dict[str, Any]) -> None:
    shown = read(account.api, environment)

    reply = update(account.api, shown)

    assert reply.status == 200, reply.body
    assert reply.json["settings"] == shown["settings"]
    provider_settings, variables, secrets = environment_values(stored(account, environment))
    assert provider_settings == {"server": "ftp.example.com", "password": PASSWORD}
    assert variables == {"STAGE": "production", "TOKEN": TOKEN_VALUE}
    assert secrets == [PASSWORD, TOKEN_VALUE]


def test_a_new_plain_value_replaces_the_secret(account: Account, environment: dict[str, Any]) -> None:
    settings = copy.deepcopy(environment["settings"])
    settings["providerSettings"][1] = named("password", "second-plain", secure=True)

    reply = update(account.api, environment, settings=settings)

    assert reply.status == 200, reply.body
    token = value_of(reply.json["settings"]["providerSettings"], "password")["value"]
    assert token != value_of(environment["settings"]["providerSettings"], "password")["value"]
    assert_opaque(token, "second-plain")
    assert environment_values(stored(account, environment))[0]["password"] == "second-plain"
    assert "second-plain" not in stored_item(account, environment)


def test_a_token_of_another_account_is_refused(
    account: Account, other_account: Account, environment: dict[str, Any]
) -> None:
    theirs = added(other_account)
    stolen = value_of(theirs["settings"]["providerSettings"], "password")["value"]
    settings = copy.deepcopy(environment["settings"])
    settings["providerSettings"][1] = named("password", stolen, secure=True)

    assert_refused(update(account.api, environment, settings=settings), 400)
    assert_refused(add(account, {**ftp_body("Stolen"), "settings": settings}), 400)

    assert read(account.api, environment) == environment
    assert [entry["name"] for entry in listed(account)] == ["Production FTP"]


def test_a_token_of_another_environment_is_refused(account: Account, environment: dict[str, Any]) -> None:
    token = value_of(environment["settings"]["providerSettings"], "password")["value"]
    body = ftp_body("Sibling")
    body["settings"]["providerSettings"][1] = named("password", token, secure=True)

    reply = account.api.post("/environments", body)

    assert reply.status == 400, reply.body
    assert "not a secret of this environment's setting password" in reply.json["message"]
    assert [shown["name"] for shown in listed(account)] == [environment["name"]]


# The access key


def test_the_access_key_finds_its_environment(account: Account, environment: dict[str, Any], access_key: str) -> None:
    found = find_environment_by_access_key(access_key)

    assert found is not None and found.environment_id == environment["deploymentEnvironmentId"]
    assert find_environment_by_access_key(access_key + "x") is None
    assert find_environment_by_access_key(environment["environmentAccessKey"]) is None  # the token is not the key


def test_each_environment_gets_its_own_access_key(account: Account, access_key: str) -> None:
    assert added(account, ftp_body("Other"))["environmentAccessKey"] != access_key


def without_tokens(environment: dict[str, Any]) -> dict[str, Any]:
    """The environment as a member who may not change it sees it: its secrets shown as set, without their tokens."""
    shown = copy.deepcopy(environment)
    for entries in shown["settings"].values():
        for entry in entries:
            if isinstance(entry.get("value"), dict) and entry["value"].get("isEncrypted"):
                entry["value"].pop("value", None)
    return shown


@pytest.mark.parametrize("allowed", [set(), {"DeployToEnvironment"}, {"ManageProjects", "UpdateProjectSettings"}])
def test_members_who_cannot_manage_environments_see_them_without_the_access_key_and_secret_tokens(
    account: Account, environment: dict[str, Any], allowed: set[str]
) -> None:
    account.add_role("Viewers", allowed)
    viewer = member_of_role(account, "Viewers")

    shown = read(viewer, environment)

    assert shown == {key: value for key, value in without_tokens(environment).items() if key != "environmentAccessKey"}
    assert viewer.get("/environments").json == listed(account)


@pytest.mark.parametrize("allowed", [{"ManageEnvironments"}, {"UpdateEnvironmentSettings"}])
def test_members_who_manage_environments_see_the_access_key_token(
    account: Account, environment: dict[str, Any], allowed: set[str]
) -> None:
    account.add_role("Keepers", allowed)

    assert read(member_of_role(account, "Keepers"), environment) == environment


def test_a_new_access_key_replaces_the_old_one(account: Account, environment: dict[str, Any], access_key: str) -> None:
    new_key = "rotated-access-key-0123456789"

    reply = update(account.api, environment, environmentAccessKey=new_key)

    assert reply.status == 200, reply.body
    assert_opaque(reply.json["environmentAccessKey"], new_key)
    assert reply.json["environmentAccessKey"] != environment["environmentAccessKey"]
    assert read(account.api, environment)["environmentAccessKey"] == reply.json["environmentAccessKey"]
    assert find_environment_by_access_key(access_key) is None
    found = find_environment_by_access_key(new_key)
    assert found is not None and found.environment_id == environment["deploymentEnvironmentId"]
    assert new_key not in stored_item(account, environment)


def test_an_update_with_the_token_the_key_itself_or_none_keeps_it(
    account: Account, environment: dict[str, Any], access_key: str
) -> None:
    body = copy.deepcopy(environment)
    del body["environmentAccessKey"]
    token = environment["environmentAccessKey"]

    assert account.api.put("/environments", body).json["environmentAccessKey"] == token
    assert update(account.api, environment).json["environmentAccessKey"] == token
    assert update(account.api, environment, environmentAccessKey=access_key).json["environmentAccessKey"] == token
    assert find_environment_by_access_key(access_key) is not None


def test_a_token_that_is_not_the_environments_own_is_refused(account: Account, environment: dict[str, Any]) -> None:
    other = read(account.api, added(account, ftp_body("Other")))

    reply = update(account.api, environment, environmentAccessKey=other["environmentAccessKey"])

    assert_refused(reply, 400)
    assert "request.environmentAccessKey" in reply.json["modelState"]
    assert read(account.api, environment) == environment


@pytest.mark.parametrize("key", ["too-short", "x" * 15, "with spaces in the key", "x" * 129, "ключ-доступа-длинный"])
def test_an_unfit_new_access_key_is_refused_and_the_old_one_kept(
    account: Account, environment: dict[str, Any], key: str
) -> None:
    reply = update(account.api, environment, environmentAccessKey=key)

    assert_refused(reply, 400)
    assert "request.environmentAccessKey" in reply.json["modelState"]
    assert read(account.api, environment) == environment


def test_an_access_key_another_environment_holds_is_a_conflict(account: Account, environment: dict[str, Any]) -> None:
    other = added(account, ftp_body("Other"))

    assert_refused(update(account.api, environment, environmentAccessKey=other["environmentAccessKey"]), 409)

    assert read(account.api, environment) == environment


# Deleting


def test_deleting_an_environment_removes_it_and_frees_its_name_and_key(
    account: Account, environment: dict[str, Any], access_key: str
) -> None:
    reply = account.api.delete(f"/environments/{environment['deploymentEnvironmentId']}")

    assert reply.status == 204
    assert reply.body == b""
    assert listed(account) == []
    assert account.api.get(settings_path(environment)).json == NOT_FOUND
    assert account.api.delete(f"/environments/{environment['deploymentEnvironmentId']}").status == 404
    assert find_environment_by_access_key(access_key) is None
    assert (
        added(account, ftp_body(environment["name"]))["deploymentEnvironmentId"]
        != environment["deploymentEnvironmentId"]
    )


# Who may do what


@pytest.mark.parametrize("granted", ["ManageEnvironments", "UpdateEnvironmentSettings", "DeployToEnvironment"])
def test_a_role_allows_exactly_the_environment_changes_it_grants(
    account: Account, environment: dict[str, Any], granted: str
) -> None:
    account.add_role("Operators", {granted})
    operator = member_of_role(account, "Operators")
    target = added(account, ftp_body("Target"))

    added_reply = add(account, ftp_body("By operator"), caller=operator)
    updated = update(operator, environment, name="Updated by operator")
    deleted = operator.delete(f"/environments/{target['deploymentEnvironmentId']}")

    assert added_reply.status == (200 if granted == "ManageEnvironments" else 403), added_reply.body
    assert updated.status == (200 if granted == "UpdateEnvironmentSettings" else 403), updated.body
    assert deleted.status == (204 if granted == "ManageEnvironments" else 403), deleted.body
    names = {entry["name"] for entry in listed(account)}
    assert ("By operator" in names) == (granted == "ManageEnvironments")
    assert ("Updated by operator" in names) == (granted == "UpdateEnvironmentSettings")
    assert ("Target" in names) == (granted != "ManageEnvironments")


def test_a_user_with_the_built_in_user_role_can_read_environments_but_not_change_them(
    account: Account, environment: dict[str, Any]
) -> None:
    member = member_of_role(account, "User")

    assert member.get("/environments").status == 200
    assert member.get(settings_path(environment)).status == 200
    assert_refused(add(account, ftp_body("Sneaky"), caller=member), 403)
    assert_refused(update(member, environment, name="Sneaky"), 403)
    assert_refused(member.delete(f"/environments/{environment['deploymentEnvironmentId']}"), 403)
    assert read(account.api, environment) == environment


# Isolation and unknown ids


def test_another_accounts_environment_is_not_found(
    account: Account, other_account: Account, environment: dict[str, Any]
) -> None:
    environment_id = environment["deploymentEnvironmentId"]

    for reply in (
        other_account.api.get(settings_path(environment)),
        update(other_account.api, environment, name="Hijacked"),
        other_account.api.delete(f"/environments/{environment_id}"),
    ):
        assert reply.status == 404, reply.body
        assert reply.json == NOT_FOUND
    assert other_account.api.get("/environments").json == []
    assert read(account.api, environment) == environment


@pytest.mark.parametrize("environment_id", ["99999999", "abc", "-1", "1.5"])
def test_an_unknown_or_malformed_id_is_not_found(account: Account, environment_id: str) -> None:
    assert_refused(account.api.get(f"/environments/{environment_id}/settings"), 404)
    assert_refused(account.api.delete(f"/environments/{environment_id}"), 404)


def test_an_update_of_an_unknown_id_is_not_found(account: Account, environment: dict[str, Any]) -> None:
    assert update(account.api, environment, deploymentEnvironmentId=99999999).json == NOT_FOUND


def test_environments_are_served_under_the_account_prefix(account: Account, environment: dict[str, Any]) -> None:
    prefixed = Caller(account.client, account.key, f"/api/account/{account.name}")

    assert prefixed.get("/environments").json == listed(account)
    assert read(prefixed, environment) == environment


# Bad requests


def _settings(**changes: Any) -> dict[str, Any]:
    body = ftp_body()
    body["settings"].update(changes)
    return body


BAD_ADD_BODIES: dict[str, Any] = {
    "not-an-object": ["FTP"],
    "no-name": {key: value for key, value in ftp_body().items() if key != "name"},
    "empty-name": ftp_body("   "),
    "long-name": ftp_body("x" * 101),
    "name-not-text": {**ftp_body(), "name": 5},
    "no-provider": {key: value for key, value in ftp_body().items() if key != "provider"},
    "provider-not-text": {**ftp_body(), "provider": ["FTP"]},
    "no-settings": {key: value for key, value in ftp_body().items() if key != "settings"},
    "settings-not-object": {**ftp_body(), "settings": []},
    "no-provider-settings": _settings(providerSettings=None),
    "no-variables": _settings(environmentVariables=None),
    "settings-not-array": _settings(providerSettings={"server": "x"}),
    "value-not-object": _settings(providerSettings=[{"name": "server", "value": "x"}]),
    "no-setting-name": _settings(providerSettings=[{"value": {"isEncrypted": False, "value": "x"}}]),
    "flag-not-bool": _settings(environmentVariables=[{"name": "A", "value": {"isEncrypted": "yes", "value": "x"}}]),
    "value-number": _settings(environmentVariables=[named("A", "x") | {"value": {"isEncrypted": False, "value": 5}}]),
    "duplicate-name": _settings(environmentVariables=[named("A", "x"), named("A", "y")]),
    "secret-object": _settings(environmentVariables=[{"name": "A", "value": {"isEncrypted": True, "value": {}}}]),
    "secret-too-long": _settings(environmentVariables=[named("A", "x" * 4097, secure=True)]),
    "notifications-not-array": _settings(notifications={"provider": "Email"}),
    "notification-without-provider": _settings(notifications=[{"to": "ops@example.com"}]),
    "empty-notification-secret": _settings(notifications=[{"provider": "Webhook", "headers": {"A": {"secure": ""}}}]),
    "too-many-values": _settings(environmentVariables=[named(f"V{index}", "x") for index in range(201)]),
    "too-large": _settings(environmentVariables=[named(f"V{index}", "x" * 2500) for index in range(150)]),
}


@pytest.mark.parametrize("body", BAD_ADD_BODIES.values(), ids=BAD_ADD_BODIES.keys())
def test_a_bad_add_body_is_refused_and_adds_nothing(account: Account, body: Any) -> None:
    assert_refused(add(account, body), 400)

    assert listed(account) == []


def _without(field: str) -> Any:
    return lambda environment: {key: value for key, value in environment.items() if key != field}


BAD_UPDATES: dict[str, Any] = {
    "no-id": _without("deploymentEnvironmentId"),
    "id-not-a-number": lambda environment: {**environment, "deploymentEnvironmentId": "first"},
    "no-name": _without("name"),
    "empty-name": lambda environment: {**environment, "name": ""},
    "no-settings": _without("settings"),
    "unknown-provider": lambda environment: {**environment, "provider": "Octopus"},
    "unknown-settings-provider": lambda environment: {
        **environment,
        "settings": {**environment["settings"], "provider": "Octopus"},
    },
    "settings-provider-not-text": lambda environment: {
        **environment,
        "settings": {**environment["settings"], "provider": 5},
    },
    "access-key-not-text": lambda environment: {**environment, "environmentAccessKey": 12345678901234567890},
    "no-variables": lambda environment: {**environment, "settings": {"providerSettings": []}},
    "duplicate-setting": lambda environment: {
        **environment,
        "settings": {**environment["settings"], "providerSettings": [named("server", "a"), named("server", "b")]},
    },
}


@pytest.mark.parametrize("spoil", BAD_UPDATES.values(), ids=BAD_UPDATES.keys())
def test_a_bad_update_body_is_refused_and_changes_nothing(
    account: Account, environment: dict[str, Any], spoil: Any
) -> None:
    reply = account.api.put("/environments", spoil(copy.deepcopy(environment)))

    assert_refused(reply, 400)
    assert read(account.api, environment) == environment


@pytest.mark.parametrize(
    "raw",
    [b"", b"\xff\xfe\x00\x01binary\x80", b"{", b"[" * 5000 + b"]" * 5000],
    ids=["empty", "binary", "truncated", "deep"],
)
@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_junk_bodies_are_client_errors(account: Account, environment: dict[str, Any], raw: bytes, method: str) -> None:
    reply = account.api.call(method, "/environments", raw=raw)

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)
    assert read(account.api, environment) == environment
    assert len(listed(account)) == 1
