"""A secret decrypts only where it was set: its project (or environment) and its field. The attack these tests
play: a member copies the token shown for another project's variable, or for an environment's password, into a
repository's appveyor.yml as ``secure:`` (or into settings they may update) and prints it in a build.

Tokens made before that binding (``cvy1:``, bound to the account only) keep working where they are stored."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import replace
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.domain.deployments.environments import environment_values
from chalicelib.domain.shared import secrets
from chalicelib.domain.triggers.webhooks import Delivery, authenticate
from chalicelib.errors import Unauthorized
from chalicelib.local.pump import SqsPump
from chalicelib.store import environments as environment_store
from chalicelib.store import keys
from chalicelib.store import projects as project_store
from chalicelib.store.accounts import get_account_by_name
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, Caller, add_project, member_of_role, project_path

VICTIM_SECRET = "victim-deploy-key"
SPREAD = "v-i-c-t-i-m---d-e-p-l-o-y"  # what `sed 's/./&-/g'` makes of it: masking cannot catch that


def set_variables(caller: Caller, project: dict[str, Any], variables: dict[str, str]) -> int:
    body = [{"name": name, "value": {"isEncrypted": True, "value": value}} for name, value in variables.items()]
    return caller.put(project_path(project) + "/settings/environment-variables", body).status


def token_of(caller: Caller, project: dict[str, Any], name: str) -> str:
    reply = caller.get(project_path(project) + "/settings/environment-variables")
    assert reply.status == 200, reply.body
    token: str = next(entry["value"]["value"] for entry in reply.json if entry["name"] == name)
    return token


def legacy_token(account_id: int, plain: str) -> str:
    """A token as Conveyor made them before secrets were bound to their owner: bound to the account only."""
    blob = aws.client("kms").encrypt(
        KeyId=settings().kms_key, Plaintext=plain.encode(), EncryptionContext={"conveyor-account": str(account_id)}
    )["CiphertextBlob"]
    return "cvy1:" + base64.b64encode(blob).decode()


def ftp_settings(password: str) -> dict[str, Any]:
    secret = {"name": "password", "value": {"isEncrypted": True, "value": password}}
    return {"providerSettings": [secret], "environmentVariables": []}


def store_variables_as_before(project: dict[str, Any], variables: list[dict[str, Any]]) -> None:
    """Write the project's variables straight into its item, as the code before the binding left them."""
    stored = project_store.get_project(project["accountId"], project["slug"])
    assert stored is not None
    configuration = json.loads(json.dumps(stored.configuration))
    configuration["environmentVariables"] = variables
    project_store.save_settings(stored, replace(stored, configuration=configuration))


def printing(*names: str, secure: dict[str, str] | None = None) -> str:
    """An appveyor.yml that sets ``secure`` variables from tokens and prints ``names`` spread out."""
    lines = ["environment:"] + [f"  {name}:\n    secure: {token}" for name, token in (secure or {}).items()]
    if not secure:
        lines = []
    lines.append("build_script:")
    lines += [f"  - echo \"{name}=${name}\" | sed 's/./&-/g'" for name in names]
    return appveyor_yml(*lines)


@pytest.fixture
def build_project(account: Account, git_server: GitServer, pump: SqsPump):  # type: ignore[no-untyped-def]
    def make(yml: str) -> BuildProject:
        return BuildProject(account, git_server, {"appveyor.yml": yml})

    return make


def only_log(project: BuildProject, build: dict[str, Any]) -> str:
    return project.log(build["jobs"][0]["jobId"])


def test_a_token_copied_from_another_project_does_not_decrypt_in_a_build(account: Account, build_project) -> None:  # type: ignore[no-untyped-def]
    victim = add_project(account, "octo/victim")
    assert set_variables(account.api, victim, {"DEPLOY_KEY": VICTIM_SECRET}) == 204
    stolen = token_of(member_of_role(account, "User"), victim, "DEPLOY_KEY")
    attacker = build_project(printing("DEPLOY_KEY", secure={"DEPLOY_KEY": stolen}))

    build = attacker.run()

    log = only_log(attacker, build)
    assert SPREAD not in log
    assert "Secure variable DEPLOY_KEY is not set" in log
    assert "not a secret of this project's variable DEPLOY_KEY" in log


def test_a_projects_own_token_works_in_its_appveyor_yml_under_the_same_name(account: Account, build_project) -> None:  # type: ignore[no-untyped-def]
    project = build_project(printing("DEPLOY_KEY"))
    assert set_variables(account.api, project.project, {"DEPLOY_KEY": VICTIM_SECRET}) == 204
    token = token_of(account.api, project.project, "DEPLOY_KEY")
    project.repository.commit({"appveyor.yml": printing("DEPLOY_KEY", "OTHER", secure={"OTHER": token})})

    build = project.run()

    log = only_log(project, build)
    assert f"D-E-P-L-O-Y-_-K-E-Y-=-{SPREAD}" in log  # the variable set in the settings decrypts
    assert "Secure variable OTHER is not set" in log  # its token under another name does not


def test_a_token_of_another_project_or_variable_is_refused_in_settings(account: Account) -> None:
    victim, attacker = add_project(account, "octo/victim"), add_project(account, "octo/attacker")
    assert set_variables(account.api, victim, {"DEPLOY_KEY": VICTIM_SECRET, "OTHER": "other-value"}) == 204
    stolen = token_of(account.api, victim, "DEPLOY_KEY")

    into_another_project = set_variables(account.api, attacker, {"DEPLOY_KEY": stolen})
    into_another_variable = set_variables(account.api, victim, {"DEPLOY_KEY": stolen, "OTHER": stolen})

    assert (into_another_project, into_another_variable) == (400, 400)
    assert token_of(account.api, victim, "OTHER") != stolen


def test_an_environments_password_token_does_not_decrypt_in_a_project_or_another_environment(account: Account) -> None:
    def add_environment(name: str, password: str) -> dict[str, Any]:
        reply = account.api.post(
            "/environments",
            {
                "name": name,
                "provider": "FTP",
                "settings": ftp_settings(password),
            },
        )
        assert reply.status == 200, reply.body
        return reply.json

    production = add_environment("production", "production-password")
    stolen = production["settings"]["providerSettings"][0]["value"]["value"]
    staging = add_environment("staging", "staging-password")
    project = add_project(account, "octo/app")

    into_project = set_variables(account.api, project, {"password": stolen})
    into_staging = account.api.put(
        "/environments",
        {
            "deploymentEnvironmentId": staging["deploymentEnvironmentId"],
            "name": "staging",
            "provider": "FTP",
            "settings": ftp_settings(stolen),
        },
    )

    assert (into_project, into_staging.status) == (400, 400)
    assert "not a secret of this environment's setting password" in into_staging.json["message"]


def test_the_webhook_secret_and_environment_tokens_are_shown_only_to_who_may_change_them(account: Account) -> None:
    project = add_project(account, "octo/hooked")
    settings_path = project_path(project) + "/settings"
    settings_body = account.api.get(settings_path).json["settings"]
    assert account.api.put("/projects", {**settings_body, "webhookSecret": "hook-secret"}).status == 204
    environment = account.api.post(
        "/environments",
        {
            "name": "production",
            "provider": "FTP",
            "settings": ftp_settings("ftp-pass"),
        },
    ).json
    member = member_of_role(account, "User")
    environment_path = f"/environments/{environment['deploymentEnvironmentId']}/settings"

    owner_sees = account.api.get(settings_path).json["settings"], account.api.get(environment_path).json
    member_sees = member.get(settings_path).json["settings"], member.get(environment_path).json

    assert owner_sees[0]["webhookSecret"].startswith(secrets.TOKEN_PREFIX)
    assert owner_sees[1]["environment"]["settings"]["providerSettings"][0]["value"]["value"].startswith("cvy2:")
    assert "webhookSecret" not in member_sees[0]
    assert member_sees[1]["environment"]["settings"]["providerSettings"][0]["value"] == {"isEncrypted": True}


# After the upgrade: tokens made before the binding


def test_legacy_tokens_keep_working_in_their_own_project_and_nowhere_else(account: Account, build_project) -> None:  # type: ignore[no-untyped-def]
    old = legacy_token(account_id_of(account), VICTIM_SECRET)
    project = build_project(printing("DEPLOY_KEY", "IN_YML", secure={"DEPLOY_KEY": old, "IN_YML": old}))
    store_variables_as_before(project.project, [{"name": "DEPLOY_KEY", "value": {"isEncrypted": True, "value": old}}])
    other = build_project(printing("DEPLOY_KEY", secure={"DEPLOY_KEY": old}))

    own, elsewhere = project.run(), other.run()

    own_log, other_log = only_log(project, own), only_log(other, elsewhere)
    assert f"D-E-P-L-O-Y-_-K-E-Y-=-{SPREAD}" in own_log  # in its project's appveyor.yml under its own name too
    assert f"I-N-_-Y-M-L-=-{SPREAD}" not in own_log and "Secure variable IN_YML is not set" in own_log  # not another
    assert SPREAD not in other_log and "Secure variable DEPLOY_KEY is not set" in other_log
    # the settings still show it, and sending it back keeps it
    variables = account.api.get(project.path + "/settings/environment-variables").json
    assert variables[0]["value"]["value"] == old
    assert account.api.put(project.path + "/settings/environment-variables", variables).status == 204
    assert set_variables(account.api, other.project, {"IN_YML": old}) == 400


def test_a_legacy_environment_setting_still_decrypts_for_its_deployments(account: Account) -> None:
    body = {"name": "legacy", "provider": "FTP", "settings": ftp_settings("new-pass")}
    reply = account.api.post("/environments", body)
    assert reply.status == 200, reply.body
    environment = environment_store.get_environment(account_id_of(account), reply.json["deploymentEnvironmentId"])
    assert environment is not None
    old = legacy_token(environment.account_id, "legacy-ftp-password")
    upgraded = replace(
        environment,
        settings={
            "providerSettings": [{"name": "password", "value": {"isEncrypted": True, "value": old}}],
            "environmentVariables": [],
            "notifications": [],
        },
    )
    environment_store.save_environment(environment, upgraded)

    provider_settings, _, masked = environment_values(upgraded)

    assert provider_settings["password"] == "legacy-ftp-password" and masked == ["legacy-ftp-password"]


def account_id_of(account: Account) -> int:
    stored = get_account_by_name(account.name)
    assert stored is not None
    return stored.account_id


def test_a_legacy_webhook_secret_still_authenticates_its_projects_deliveries(account: Account) -> None:
    project = add_project(account, "octo/hooked")
    stored = project_store.get_project(project["accountId"], project["slug"])
    assert stored is not None
    upgraded = replace(stored, webhook_secret=legacy_token(stored.account_id, "legacy-hook-secret"))
    project_store.save_settings(stored, upgraded)
    body = b'{"ref": "refs/heads/master"}'

    def delivery(secret: str) -> Delivery:
        signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return Delivery("github", stored.webhook_id, {"x-hub-signature-256": signature}, body)

    authenticate(upgraded, delivery("legacy-hook-secret"))  # raises Unauthorized if the secret no longer decrypts
    with pytest.raises(Unauthorized):
        authenticate(upgraded, delivery("another-secret"))


def test_a_token_moved_to_another_variable_of_its_project_is_refused(account: Account) -> None:
    project = add_project(account, "octo/moved")
    assert set_variables(account.api, project, {"DEPLOY_KEY": VICTIM_SECRET}) == 204
    token = token_of(account.api, project, "DEPLOY_KEY")

    reply = account.api.put(
        project_path(project) + "/settings/environment-variables",
        [{"name": "RENAMED", "value": {"isEncrypted": True, "value": token}}],
    )

    assert reply.status == 400
    assert "variable RENAMED is the one of variable DEPLOY_KEY" in reply.json["message"]
    assert token_of(account.api, project, "DEPLOY_KEY") == token


def test_kms_decrypts_a_secret_only_under_the_context_naming_the_owner_it_was_encrypted_for() -> None:
    context = {"accountId": "1", "owner": "project/2"}
    blob = keys.encrypt(VICTIM_SECRET.encode(), context)

    assert keys.decrypt(blob, context) == VICTIM_SECRET.encode()
    with pytest.raises(keys.Undecryptable):
        keys.decrypt(blob, {**context, "owner": "project/3"})
    with pytest.raises(keys.Undecryptable):
        keys.decrypt(b"not a ciphertext", context)


def test_an_environments_stored_password_does_not_follow_it_to_another_server(account: Account) -> None:
    def settings(server: str, password: str) -> dict[str, Any]:
        return {
            "providerSettings": [
                {"name": "server", "value": {"isEncrypted": False, "value": server}},
                {"name": "password", "value": {"isEncrypted": True, "value": password}},
            ],
            "environmentVariables": [],
        }

    added = account.api.post(
        "/environments", {"name": "ftp", "provider": "FTP", "settings": settings("127.0.0.1:21", "ftp-pass")}
    )
    assert added.status == 200, added.body
    environment_id = added.json["deploymentEnvironmentId"]
    token = added.json["settings"]["providerSettings"][1]["value"]["value"]

    def update(server: str, password: str) -> int:
        body = {
            "deploymentEnvironmentId": environment_id,
            "name": "ftp",
            "provider": "FTP",
            "settings": settings(server, password),
        }
        return account.api.put("/environments", body).status

    assert update("127.0.0.2:21", token) == 400  # an updater's own server, the stored password kept: refused
    assert update("127.0.0.1:21", token) == 200  # the same server: the token keeps the password
    assert update("127.0.0.2:21", "ftp-pass-again") == 200  # sent again: the updater knows it anyway
