"""A second review of issue 34, finding 2, for a project's secrets: a token read before a secret was set again, or
before its deployment's destination moved, is refused when a project updater sends it back (a 400 naming the
field; nothing changes): only the token stored at that field now keeps its secret."""

from __future__ import annotations

import copy
from typing import Any

from tests.functional.test_project_secrets import (
    put_yaml,
    read_settings,
    read_variables,
    read_yaml,
    secret_named,
    variables_path,
)
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


def per_branch_yaml(main_token: str, release_token: str, name: str = "SECRET") -> str:
    """Settings YAML kept as written: ``SECRET`` on every branch, and ``name`` on the release branch."""
    return "\n".join(
        [
            "environment:",
            "  SECRET:",
            f"    secure: {main_token}",
            "for:",
            "  - branches:",
            "      only:",
            "        - release",
            "    environment:",
            f"      {name}:",
            f"        secure: {release_token}",
            "",
        ]
    )


def test_a_for_item_of_the_settings_yaml_takes_the_token_the_settings_show_for_its_variable(account: Account) -> None:
    project = add_project(account, "octo/per-branch")
    assert account.api.put(variables_path(project), [secure_variable("SECRET", "the-current-secret")]).status == 204
    token = secret_named(read_variables(account.api, project), "SECRET")

    first = put_yaml(account, project, per_branch_yaml(token, token))
    again = put_yaml(account, project, read_yaml(account, project))  # put back as read

    assert (first.status, again.status) == (204, 204), (first.body, again.body)
    assert read_yaml(account, project) == per_branch_yaml(token, token)


def test_a_project_updater_cannot_move_a_variables_token_to_another_variable_through_a_for_item(
    account: Account,
) -> None:
    project = add_project(account, "octo/per-branch-moved")
    variables = [secure_variable("SECRET", "the-current-secret"), secure_variable("DEPLOY_KEY", "the-deploy-key")]
    assert account.api.put(variables_path(project), variables).status == 204
    shown = read_variables(account.api, project)
    secret, deploy_key = secret_named(shown, "SECRET"), secret_named(shown, "DEPLOY_KEY")

    reply = put_yaml(account, project, per_branch_yaml(secret, deploy_key, name="SECRET"))

    assert_refused(reply, 400)
    assert "is not the one stored there now" in reply.json["message"]
    assert secret_named(read_variables(account.api, project), "DEPLOY_KEY") == deploy_key
