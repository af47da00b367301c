"""A second review of issue 34, finding 2, for a project's secrets: a token read before a secret was set again, or
before its deployment's destination moved, is refused when a project updater sends it back (a 400 naming the
field; nothing changes): only the token stored at that field now keeps its secret."""

from __future__ import annotations

import copy
from typing import Any

from tests.functional.test_project_secrets import read_settings, read_variables, secret_named, variables_path
from tests.support import Account, add_project, assert_refused, project_path


def secure_variable(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": {"isEncrypted": True, "value": value}}


def ftp_deployment(server: str, password: str) -> dict[str, Any]:
    return {
        "provider": "FTP",
        "providerSettings": [
            {"name": "server", "value": {"isEncrypted": False, "value": server}},
            {"name": "password", "value": {"isEncrypted": True, "value": password}},
        ],
        "onBranch": [],
        "onEnvironmentVariables": [],
    }


def test_a_project_updater_cannot_bring_back_a_secure_variable_read_before_it_was_set_again(account: Account) -> None:
    project = add_project(account, "octo/rotated")
    assert account.api.put(variables_path(project), [secure_variable("SECRET", "the-leaked-secret")]).status == 204
    old_token = secret_named(read_variables(account.api, project), "SECRET")
    assert account.api.put(variables_path(project), [secure_variable("SECRET", "the-rotated-secret")]).status == 204
    rotated = secret_named(read_variables(account.api, project), "SECRET")

    through_variables = account.api.put(variables_path(project), [secure_variable("SECRET", old_token)])
    settings = read_settings(account, project)
    settings["configuration"]["environmentVariables"] = [secure_variable("SECRET", old_token)]
    through_settings = account.api.put("/projects", settings)

    assert_refused(through_variables, 400)
    assert_refused(through_settings, 400)
    assert "Send the plain value" in through_variables.json["message"]
    assert secret_named(read_variables(account.api, project), "SECRET") == rotated


def test_a_project_updater_cannot_move_a_deployment_password_to_their_server_in_two_updates(
    account: Account,
) -> None:
    project = add_project(account, "octo/moved")
    settings = read_settings(account, project)
    settings["configuration"]["deployments"] = [ftp_deployment("ftp.example.com", "the-release-password")]
    assert account.api.put("/projects", settings).status == 204
    as_read = read_settings(account, project)
    old_token = as_read["configuration"]["deployments"][0]["providerSettings"][1]["value"]["value"]

    moved = copy.deepcopy(as_read)
    moved["configuration"]["deployments"] = [ftp_deployment("ftp.attacker.example", "the-attackers-own-value")]
    assert account.api.put("/projects", moved).status == 204  # a new destination with a value of theirs
    replayed = read_settings(account, project)
    replayed["configuration"]["deployments"][0]["providerSettings"][1]["value"]["value"] = old_token
    reply = account.api.put("/projects", replayed)

    assert_refused(reply, 400)
    stored = account.api.get(project_path(project) + "/settings").json["settings"]["configuration"]["deployments"]
    assert stored[0]["providerSettings"][1]["value"]["value"] != old_token
