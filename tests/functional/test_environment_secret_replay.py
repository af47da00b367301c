"""A second review of issue 34, finding 2, as an attacker: an environment's stored secret follows a destination
of the updater's own when moved in two steps. First the URL is changed with a new secure value of the updater's
(accepted: the sender knows it); then the stored secret's token, read before, is sent back with the URL unchanged
(the destination did not change in that update, and the token still decrypts for the environment's provider)."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from chalicelib.deploy.destinations import delivery_binding
from chalicelib.domain.deployments.environments import environment_values
from chalicelib.domain.migrations import migrate
from chalicelib.domain.shared import secrets
from chalicelib.errors import Invalid
from chalicelib.store import environments as environment_store
from tests.builds import BuildProject
from tests.deployments import deploy, named, wait_for_deployment
from tests.functional.test_environment_secret_destinations import (  # noqa: F401
    PASSWORD,
    _account_id,
    add,
    ftp_environment,
    read,
    receivers,
    updater,
)
from tests.support import Account

AUTHORIZATION = "Bearer production-hook-secret"


def test_an_environment_updater_moves_a_stored_secret_to_their_url_in_two_updates(
    built: tuple[BuildProject, dict[str, Any]],
    receivers: Any,  # noqa: F811
) -> None:
    project, build = built
    own, attackers = receivers
    environment = add(
        project.account,
        "Webhook",
        [named("url", own.url + "/deploy"), named("authorization", AUTHORIZATION, secure=True)],
        [],
    )
    attacker = updater(project.account)
    as_read = read(attacker, environment)
    stored_token = as_read["settings"]["providerSettings"][1]["value"]["value"]
    assert stored_token.startswith("cvy2:")

    moved = copy.deepcopy(as_read)
    moved["settings"]["providerSettings"][0]["value"]["value"] = attackers.url + "/stolen"
    moved["settings"]["providerSettings"][1]["value"]["value"] = "Bearer the-attackers-own-value"  # sent again
    first = attacker.put("/environments", moved)
    assert first.status == 200, first.body  # a new destination with new secure values: allowed

    replayed = copy.deepcopy(read(attacker, environment))
    replayed["settings"]["providerSettings"][1]["value"]["value"] = stored_token  # the old secret's token, read before
    second = attacker.put("/environments", replayed)

    started = deploy(project, environment, build["version"])  # the next deployment, started by whoever deploys
    assert started.status == 200, started.body
    wait_for_deployment(project.account, started.json["deploymentId"])
    received = [request.headers.get("authorization") for request in attackers.requests]
    assert AUTHORIZATION not in received, "the stored secret went to the updater's URL"
    assert second.status == 400, second.body


def test_an_environment_updater_cannot_put_back_a_token_read_before_an_admin_set_the_secret_again(
    built: tuple[BuildProject, dict[str, Any]],
    receivers: Any,  # noqa: F811
) -> None:
    # an admin rotates a leaked secret; an updater who kept the old token puts it back: the old secret is delivered
    project, build = built
    own, _ = receivers
    environment = add(
        project.account,
        "Webhook",
        [named("url", own.url + "/deploy"), named("authorization", AUTHORIZATION, secure=True)],
        [],
    )
    attacker = updater(project.account)
    old_token = read(attacker, environment)["settings"]["providerSettings"][1]["value"]["value"]
    rotated = copy.deepcopy(read(project.account.api, environment))
    rotated["settings"]["providerSettings"][1]["value"]["value"] = "Bearer the-rotated-hook-secret"
    assert project.account.api.put("/environments", rotated).status == 200

    replayed = copy.deepcopy(read(attacker, environment))
    replayed["settings"]["providerSettings"][1]["value"]["value"] = old_token
    reply = attacker.put("/environments", replayed)

    started = deploy(project, environment, build["version"])
    assert started.status == 200, started.body
    wait_for_deployment(project.account, started.json["deploymentId"])
    assert [request.headers.get("authorization") for request in own.requests] == ["Bearer the-rotated-hook-secret"]
    assert reply.status == 400, reply.body
    assert "Send the plain value" in reply.json["message"]


def test_an_environments_secret_does_not_decrypt_once_its_stored_server_is_another(account: Account) -> None:
    # the second lock, whatever wrote the item (a restore, a path that forgot the update's rules): an environment's
    # secrets are bound to its destination settings as written, as an appveyor.yml deploy: entry's are
    environment = ftp_environment(account)
    stored = environment_store.get_environment(_account_id(account), environment["deploymentEnvironmentId"])
    assert stored is not None
    assert environment_values(stored)[0]["password"] == PASSWORD
    moved = copy.deepcopy(stored.settings)
    moved["providerSettings"][0]["value"]["value"] = "127.0.0.2:21"  # the token stays as it is

    with pytest.raises(Invalid, match="setting password"):
        environment_values(replace(stored, settings=moved))


def test_environment_secrets_bound_to_their_provider_alone_deliver_after_the_migration(account: Account) -> None:
    environment = ftp_environment(account)
    stored = environment_store.get_environment(_account_id(account), environment["deploymentEnvironmentId"])
    assert stored is not None
    # how tokens were made before they were bound to the destination too: to the provider alone
    provider_only = replace(
        secrets.environment_owner(stored), binding=delivery_binding(stored.provider, stored.access_key_hash)
    )
    settings = copy.deepcopy(stored.settings)
    password, db = secrets.encrypt(provider_only, "setting/password", "old-password"), "variable/DB_PASSWORD"
    settings["providerSettings"][2]["value"]["value"] = password
    settings["environmentVariables"][0]["value"]["value"] = secrets.encrypt(provider_only, db, "old-db")
    before = environment_store.save_environment(stored, replace(stored, settings=settings))
    with pytest.raises(Invalid):
        environment_values(before)  # not bound to where it delivers: refused until migrated

    changed = migrate()["environment secrets' binding"]
    again = migrate()["environment secrets' binding"]

    after = environment_store.get_environment(before.account_id, before.environment_id)
    assert after is not None and changed >= 1 and again == 0
    provider_settings, variables, _ = environment_values(after)
    assert (provider_settings["password"], variables["DB_PASSWORD"]) == ("old-password", "old-db")
    as_read = read(account.api, environment)
    assert as_read["settings"]["providerSettings"][2]["value"]["value"] not in (password, PASSWORD)
    assert account.api.put("/environments", as_read).status == 200  # the migrated token is the one stored there
