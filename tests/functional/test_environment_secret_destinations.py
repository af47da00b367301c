"""An environment's secrets go only where they were set for (issue 34, finding 2): its provider, an Agent
environment's access key, and its destination settings with the variables they name. Who may update an
environment sees its secrets' tokens only; who may start a deployment sees nothing of them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from chalicelib.domain.deployments.environments import environment_values
from chalicelib.domain.migrations import migrate
from chalicelib.domain.shared import secrets
from chalicelib.errors import Invalid
from chalicelib.store import environments as environment_store
from chalicelib.store import jobs as job_store
from chalicelib.store.accounts import get_account_by_name
from tests.builds import BuildProject
from tests.deployments import deploy, named, wait_for_deployment
from tests.peers import WebhookReceiver
from tests.support import Account, Caller, member_of_role, unique

PASSWORD = "production-ftp-password"
DB_PASSWORD = "production-db-password"


def attackers_key() -> str:
    return unique("attackers-own-agent-key-0123456789")


def updater(account: Account) -> Caller:
    """A member whose role may update environments' settings, and nothing else."""
    role = account.add_role(unique("environment-updaters"), {"UpdateEnvironmentSettings"})
    return member_of_role(account, role["name"])


def add(account: Account, provider: str, settings: list[dict[str, Any]], variables: list[dict[str, Any]]) -> Any:
    body = {
        "name": unique("env"),
        "provider": provider,
        "settings": {"providerSettings": settings, "environmentVariables": variables},
    }
    reply = account.api.post("/environments", body)
    assert reply.status == 200, reply.body
    return reply.json


def read(caller: Caller, environment: dict[str, Any]) -> dict[str, Any]:
    reply = caller.get(f"/environments/{environment['deploymentEnvironmentId']}/settings")
    assert reply.status == 200, reply.body
    return dict(reply.json["environment"])


def ftp_environment(account: Account) -> dict[str, Any]:
    return add(
        account,
        "FTP",
        [named("server", "127.0.0.1:21"), named("username", "deployer"), named("password", PASSWORD, secure=True)],
        [named("DB_PASSWORD", DB_PASSWORD, secure=True)],
    )


def agent_takes(key: str, account: Account) -> str:
    """What an agent holding ``key`` is handed when it asks for its next job, as text (its reply's body)."""
    return Caller(account.client, key).post("/agent/jobs/next", {"name": "attackers-machine"}).body.decode()


def test_an_environment_updater_cannot_turn_an_ftp_environment_into_their_own_agent_to_take_its_secrets(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = ftp_environment(project.account)
    attacker = updater(project.account)
    as_read, key = read(attacker, environment), attackers_key()

    reply = attacker.put("/environments", {**as_read, "provider": "Agent", "environmentAccessKey": key})
    deploy(project, environment, build["version"])  # the next deployment, started by whoever deploys
    taken = agent_takes(key, project.account)

    assert reply.status == 400, reply.body
    assert "send its secure values again" in reply.json["message"]
    assert PASSWORD not in taken and DB_PASSWORD not in taken
    assert read(project.account.api, environment)["provider"] == "FTP"


def test_an_environment_updater_cannot_put_their_own_key_on_an_agent_environment_to_take_its_secrets(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = add(project.account, "Agent", [named("password", PASSWORD, secure=True)], [])
    attacker, key = updater(project.account), attackers_key()

    reply = attacker.put("/environments", {**read(attacker, environment), "environmentAccessKey": key})
    deploy(project, environment, build["version"])
    taken = agent_takes(key, project.account)

    assert reply.status == 400, reply.body
    assert PASSWORD not in taken
    assert PASSWORD in agent_takes(environment["environmentAccessKey"], project.account)  # its own agent's


def test_an_agent_key_change_with_the_secrets_sent_again_is_accepted(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = add(project.account, "Agent", [named("password", PASSWORD, secure=True)], [])
    as_read = read(project.account.api, environment)
    as_read["settings"]["providerSettings"][0]["value"]["value"] = PASSWORD  # sent again: its sender knows it
    key = attackers_key()

    reply = project.account.api.put("/environments", {**as_read, "environmentAccessKey": key})
    deploy(project, environment, build["version"])

    assert reply.status == 200, reply.body
    assert PASSWORD in agent_takes(key, project.account)


def test_an_agent_is_never_handed_secrets_set_for_another_provider(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    """An FTP environment made an Agent one in the store (as the attack above left it, before the fix): its agent
    gets none of its secrets, and the deployment fails saying which and why."""
    project, build = built
    environment = ftp_environment(project.account)
    stored = environment_store.get_environment(project.project["accountId"], environment["deploymentEnvironmentId"])
    assert stored is not None
    environment_store.save_environment(stored, replace(stored, provider="Agent"))
    deployment = deploy(project, environment, build["version"]).json

    taken = agent_takes(environment["environmentAccessKey"], project.account)

    assert PASSWORD not in taken and DB_PASSWORD not in taken
    finished = wait_for_deployment(project.account, deployment["deploymentId"])
    assert finished["status"] == "failed"
    job = job_store.get_job(finished["jobs"][0]["jobId"])
    assert job is not None and "setting password" in str(job.message) and "set them again" in str(job.message)


@pytest.fixture
def receivers() -> Iterator[tuple[WebhookReceiver, WebhookReceiver]]:
    with WebhookReceiver() as own, WebhookReceiver() as attackers:
        yield own, attackers


def test_a_deployment_start_variable_cannot_send_an_environments_secret_to_another_url(
    built: tuple[BuildProject, dict[str, Any]], receivers: tuple[WebhookReceiver, WebhookReceiver]
) -> None:
    project, build = built
    own, attackers = receivers
    environment = add(
        project.account,
        "Webhook",
        [named("url", "$(HOOK_URL)"), named("authorization", "Bearer hook-secret", secure=True)],
        [named("HOOK_URL", own.url + "/deploy")],
    )

    started = deploy(project, environment, build["version"], environmentVariables={"HOOK_URL": attackers.url})
    assert started.status == 200, started.body
    finished = wait_for_deployment(project.account, started.json["deploymentId"])

    assert attackers.requests == []
    assert finished["status"] == "success"
    assert [request.headers["authorization"] for request in own.requests] == ["Bearer hook-secret"]


def test_an_environment_updater_cannot_move_the_url_its_secret_goes_to_through_a_variable(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, _ = built
    environment = add(
        project.account,
        "Webhook",
        [named("url", "$(HOOK_URL)"), named("authorization", "Bearer hook-secret", secure=True)],
        [named("HOOK_URL", "http://127.0.0.1:8001/deploy")],
    )
    attacker = updater(project.account)
    changed = copy.deepcopy(read(attacker, environment))
    changed["settings"]["environmentVariables"][0]["value"]["value"] = "http://127.0.0.1:8002/"

    reply = attacker.put("/environments", changed)

    assert reply.status == 400, reply.body
    assert "send its secure values again" in reply.json["message"]


def test_an_environment_updater_cannot_send_the_stored_password_to_a_secure_url_of_their_own(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, _ = built
    environment = add(
        project.account,
        "Webhook",
        [named("url", "http://127.0.0.1:8001/deploy", secure=True), named("authorization", "Bearer s", secure=True)],
        [],
    )
    attacker = updater(project.account)
    changed = copy.deepcopy(read(attacker, environment))
    changed["settings"]["providerSettings"][0]["value"]["value"] = "http://127.0.0.1:8002/"  # theirs; the token kept

    reply = attacker.put("/environments", changed)

    assert reply.status == 400, reply.body
    assert "send its secure values again" in reply.json["message"]


def test_environment_secrets_stored_before_their_binding_deliver_after_the_migration(account: Account) -> None:
    environment = ftp_environment(account)
    stored = environment_store.get_environment(_account_id(account), environment["deploymentEnvironmentId"])
    assert stored is not None
    unbound = replace(secrets.environment_owner(stored), binding="")  # how tokens were made before the binding
    settings = copy.deepcopy(stored.settings)
    settings["providerSettings"][2]["value"]["value"] = secrets.encrypt(unbound, "setting/password", "old-password")
    settings["environmentVariables"][0]["value"]["value"] = secrets.encrypt(unbound, "variable/DB_PASSWORD", "old-db")
    before = environment_store.save_environment(stored, replace(stored, settings=settings))
    with pytest.raises(Invalid):
        environment_values(before)  # not bound to where it delivers: refused until migrated

    changed = migrate()["environment secrets' binding"]
    again = migrate()["environment secrets' binding"]

    after = environment_store.get_environment(before.account_id, before.environment_id)
    assert after is not None and changed >= 1 and again == 0
    provider_settings, variables, _ = environment_values(after)
    assert (provider_settings["password"], variables["DB_PASSWORD"]) == ("old-password", "old-db")
    assert read(account.api, environment)["settings"]["providerSettings"][2]["value"]["value"].startswith("cvy2:")


def _account_id(account: Account) -> int:
    found = get_account_by_name(account.name)
    assert found is not None
    return found.account_id
