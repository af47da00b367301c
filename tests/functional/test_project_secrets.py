"""Secret values of a project (encrypted environment variables and other secure settings): they go in as plain
text, come out only as opaque tokens, are kept when a token comes back, and never rest in plain text."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

import chalicelib.aws
import chalicelib.config
from tests.support import Account, Caller, Reply, add_project, assert_refused, member_of_role, project_path

PLAIN = "hunter2-plain"
VARIABLES: list[dict[str, Any]] = [
    {"name": "PLAIN", "value": {"isEncrypted": False, "value": "visible"}},
    {"name": "SECRET", "value": {"isEncrypted": True, "value": PLAIN}},
]


def variables_path(project: dict[str, Any]) -> str:
    return project_path(project) + "/settings/environment-variables"


def read_variables(caller: Caller, project: dict[str, Any]) -> list[dict[str, Any]]:
    reply = caller.get(variables_path(project))
    assert reply.status == 200, reply.body
    return reply.json


def read_settings(account: Account, project: dict[str, Any]) -> dict[str, Any]:
    reply = account.api.get(project_path(project) + "/settings")
    assert reply.status == 200, reply.body
    return reply.json["settings"]


def read_yaml(account: Account, project: dict[str, Any]) -> str:
    reply = account.api.get(project_path(project) + "/settings/yaml")
    assert reply.status == 200, reply.body
    return reply.body.decode()


def put_yaml(account: Account, project: dict[str, Any], text: str) -> Reply:
    return account.api.put(
        project_path(project) + "/settings/yaml", raw=text.encode(), headers={"Content-Type": "text/plain"}
    )


def secret_named(variables: list[dict[str, Any]], name: str) -> str:
    """The value a listing shows for the encrypted variable ``name``."""
    variable = next(variable for variable in variables if variable["name"] == name)
    assert variable["value"]["isEncrypted"] is True
    value: str = variable["value"]["value"]
    return value


def stored_item(project: dict[str, Any]) -> str:
    """The project's DynamoDB item, as text."""
    item = chalicelib.aws.client("dynamodb").get_item(
        TableName=chalicelib.config.settings().table_name("projects"),
        Key={"account_id": {"N": str(project["accountId"])}, "slug": {"S": project["slug"]}},
    )["Item"]
    return str(item)


def assert_nowhere(account: Account, project: dict[str, Any], plain: str) -> None:
    """No response about the project, from any reader, and not its stored item, holds ``plain``."""
    member = member_of_role(account, "User")
    for caller in (account.api, member):
        for path in (
            "/projects",
            project_path(project),
            project_path(project) + "/settings",
            project_path(project) + "/settings/yaml",
            variables_path(project),
        ):
            reply = caller.get(path)
            assert reply.status == 200, reply.body
            assert plain.encode() not in reply.body, path
    assert plain not in stored_item(project)


def assert_opaque(token: str, plain: str) -> None:
    assert isinstance(token, str) and token
    assert token != plain
    assert plain not in token


@pytest.fixture
def project(account: Account) -> dict[str, Any]:
    return add_project(account, "octo/widget")


@pytest.fixture
def token(account: Account, project: dict[str, Any]) -> str:
    """The token the project shows for its SECRET variable, set from PLAIN."""
    assert account.api.put(variables_path(project), VARIABLES).status == 204
    return secret_named(read_variables(account.api, project), "SECRET")


# Environment variables endpoint


def test_put_environment_variables_shows_plain_values_and_secret_tokens(
    account: Account, project: dict[str, Any]
) -> None:
    reply = account.api.put(variables_path(project), VARIABLES)

    assert reply.status == 204, reply.body
    variables = read_variables(account.api, project)
    assert [variable["name"] for variable in variables] == ["PLAIN", "SECRET"]
    assert variables[0] == {"name": "PLAIN", "value": {"isEncrypted": False, "value": "visible"}}
    assert_opaque(secret_named(variables, "SECRET"), PLAIN)
    assert read_settings(account, project)["configuration"]["environmentVariables"] == variables


def test_no_response_and_no_stored_item_holds_the_secret(account: Account, project: dict[str, Any], token: str) -> None:
    assert_nowhere(account, project, PLAIN)


def test_putting_back_what_was_read_keeps_the_secret(account: Account, project: dict[str, Any], token: str) -> None:
    reply = account.api.put(variables_path(project), read_variables(account.api, project))

    assert reply.status == 204, reply.body
    assert secret_named(read_variables(account.api, project), "SECRET") == token


def test_a_new_plain_value_replaces_the_secret(account: Account, project: dict[str, Any], token: str) -> None:
    changed = copy.deepcopy(VARIABLES)
    changed[1]["value"]["value"] = "second-plain"

    assert account.api.put(variables_path(project), changed).status == 204

    replaced = secret_named(read_variables(account.api, project), "SECRET")
    assert replaced != token
    assert_opaque(replaced, "second-plain")
    assert_nowhere(account, project, "second-plain")


def test_same_plain_value_twice_gives_tokens_that_still_hide_it(account: Account, project: dict[str, Any]) -> None:
    variables = [{"name": name, "value": {"isEncrypted": True, "value": PLAIN}} for name in ("ONE", "TWO")]

    assert account.api.put(variables_path(project), variables).status == 204

    shown = read_variables(account.api, project)
    for name in ("ONE", "TWO"):
        assert_opaque(secret_named(shown, name), PLAIN)
    assert_nowhere(account, project, PLAIN)


def test_secret_shows_in_yaml_as_a_secure_token(account: Account, project: dict[str, Any], token: str) -> None:
    document = yaml.safe_load(read_yaml(account, project))

    assert document["environment"] == {"PLAIN": "visible", "SECRET": {"secure": token}}


# YAML


def test_yaml_secure_value_is_stored_as_a_token(account: Account, project: dict[str, Any]) -> None:
    reply = put_yaml(account, project, "environment:\n  PLAIN: visible\n  SECRET:\n    secure: newplain\n")

    assert reply.status == 204, reply.body
    text = read_yaml(account, project)
    assert "newplain" not in text
    shown = yaml.safe_load(text)["environment"]["SECRET"]["secure"]
    assert_opaque(shown, "newplain")
    assert secret_named(read_variables(account.api, project), "SECRET") == shown
    assert_nowhere(account, project, "newplain")


def test_yaml_secure_value_replaces_an_earlier_secret(account: Account, project: dict[str, Any], token: str) -> None:
    assert put_yaml(account, project, "environment:\n  SECRET:\n    secure: newplain\n").status == 204

    replaced = secret_named(read_variables(account.api, project), "SECRET")
    assert replaced != token
    assert_opaque(replaced, "newplain")


def test_yaml_round_trip_keeps_the_secret(account: Account, project: dict[str, Any], token: str) -> None:
    text = read_yaml(account, project)

    assert put_yaml(account, project, text).status == 204

    assert read_yaml(account, project) == text
    assert secret_named(read_variables(account.api, project), "SECRET") == token


def test_yaml_secure_notification_setting_is_stored_as_a_token(account: Account, project: dict[str, Any]) -> None:
    text = (
        "notifications:\n  - provider: Webhook\n    url: https://hooks.example.com/build\n"
        "    headers:\n      Authorization:\n        secure: notify-plain\n"
    )

    assert put_yaml(account, project, text).status == 204

    assert "https://hooks.example.com/build" in read_yaml(account, project)
    assert_nowhere(account, project, "notify-plain")


# The whole settings object


def test_settings_put_of_unchanged_settings_keeps_the_secret(
    account: Account, project: dict[str, Any], token: str
) -> None:
    assert account.api.put("/projects", read_settings(account, project)).status == 204

    assert secret_named(read_variables(account.api, project), "SECRET") == token


def test_settings_put_with_a_new_plain_secret_encrypts_it(
    account: Account, project: dict[str, Any], token: str
) -> None:
    settings = read_settings(account, project)
    settings["configuration"]["environmentVariables"][1]["value"]["value"] = "settings-plain"

    assert account.api.put("/projects", settings).status == 204

    replaced = secret_named(read_variables(account.api, project), "SECRET")
    assert replaced != token
    assert_opaque(replaced, "settings-plain")
    assert_nowhere(account, project, "settings-plain")


def test_encrypted_deployment_setting_is_stored_as_a_token(account: Account, project: dict[str, Any]) -> None:
    settings = read_settings(account, project)
    settings["configuration"]["deployments"] = [
        {
            "provider": "FTP",
            "providerSettings": [
                {"name": "server", "value": {"isEncrypted": False, "value": "ftp.example.com"}},
                {"name": "password", "value": {"isEncrypted": True, "value": "ftp-plain"}},
            ],
            "onBranch": [],
            "onEnvironmentVariables": [],
        }
    ]

    assert account.api.put("/projects", settings).status == 204

    stored = read_settings(account, project)["configuration"]["deployments"][0]["providerSettings"]
    assert stored[0]["value"]["value"] == "ftp.example.com"
    assert stored[1]["value"]["isEncrypted"] is True
    assert_opaque(stored[1]["value"]["value"], "ftp-plain")
    assert_nowhere(account, project, "ftp-plain")


# Another account's tokens


def foreign_token(other_account: Account) -> str:
    theirs = add_project(other_account, "octo/theirs")
    assert other_account.api.put(variables_path(theirs), VARIABLES).status == 204
    return secret_named(read_variables(other_account.api, theirs), "SECRET")


def test_another_accounts_token_is_refused_in_environment_variables(
    account: Account, other_account: Account, project: dict[str, Any], token: str
) -> None:
    stolen = foreign_token(other_account)
    variables = [{"name": "SECRET", "value": {"isEncrypted": True, "value": stolen}}]

    reply = account.api.put(variables_path(project), variables)

    assert_refused(reply, 400)
    assert secret_named(read_variables(account.api, project), "SECRET") == token


def test_another_accounts_token_is_refused_in_yaml(
    account: Account, other_account: Account, project: dict[str, Any], token: str
) -> None:
    stolen = foreign_token(other_account)

    reply = put_yaml(account, project, f"environment:\n  SECRET:\n    secure: {stolen}\n")

    assert_refused(reply, 400)
    assert secret_named(read_variables(account.api, project), "SECRET") == token


def test_another_accounts_token_is_refused_in_settings(
    account: Account, other_account: Account, project: dict[str, Any], token: str
) -> None:
    stolen = foreign_token(other_account)
    settings = read_settings(account, project)
    settings["configuration"]["environmentVariables"][1]["value"]["value"] = stolen

    assert_refused(account.api.put("/projects", settings), 400)
    assert secret_named(read_variables(account.api, project), "SECRET") == token


def test_a_token_of_another_project_of_the_account_is_refused(
    account: Account, project: dict[str, Any], token: str
) -> None:
    sibling = add_project(account, "octo/sibling")
    shared = [{"name": "SECRET", "value": {"isEncrypted": True, "value": token}}]

    assert_refused(account.api.put(variables_path(sibling), shared), 400)

    assert read_variables(account.api, sibling) == []


# Validation of the variable list


@pytest.mark.parametrize(
    "body",
    [
        {"name": "A", "value": {"isEncrypted": False, "value": "x"}},
        "A=x",
        None,
        [{"value": {"isEncrypted": False, "value": "x"}}],
        [{"name": "", "value": {"isEncrypted": False, "value": "x"}}],
        [{"name": 5, "value": {"isEncrypted": False, "value": "x"}}],
        [
            {"name": "A", "value": {"isEncrypted": False, "value": "x"}},
            {"name": "A", "value": {"isEncrypted": False, "value": "y"}},
        ],
        [{"name": "A", "value": "x"}],
        [{"name": "A"}],
        [{"name": "A", "value": {"isEncrypted": "yes", "value": "x"}}],
        [{"name": "A", "value": {"isEncrypted": False, "value": 5}}],
        [{"name": "A", "value": {"isEncrypted": True, "value": {"nested": "x"}}}],
        ["A"],
    ],
    ids=[
        "object",
        "string",
        "null",
        "no-name",
        "empty-name",
        "number-name",
        "duplicate",
        "value-string",
        "no-value",
        "flag-not-bool",
        "value-number",
        "secret-object",
        "string-entry",
    ],
)
def test_bad_variable_list_is_refused_and_nothing_changes(
    account: Account, project: dict[str, Any], token: str, body: Any
) -> None:
    before = read_variables(account.api, project)

    assert_refused(account.api.put(variables_path(project), body), 400)
    assert read_variables(account.api, project) == before


@pytest.mark.parametrize(
    "raw",
    [b"", b"\xff\xfe\x00\x01binary\x80", b"[{", b"[" * 5000 + b"]" * 5000],
    ids=["empty", "binary", "truncated", "deep"],
)
def test_junk_variable_body_is_a_client_error(account: Account, project: dict[str, Any], raw: bytes) -> None:
    reply = account.api.put(variables_path(project), raw=raw)

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)
    assert read_variables(account.api, project) == []


def test_empty_list_removes_every_variable(account: Account, project: dict[str, Any], token: str) -> None:
    assert account.api.put(variables_path(project), []).status == 204

    assert read_variables(account.api, project) == []
    assert token not in read_yaml(account, project)
