"""An appveyor.yml's ``deploy: provider: Environment`` deploys only a project the environment lists (issue 34,
finding 4): whoever may push to a repository otherwise deployed its artifacts to any environment of the account,
with that environment's production settings and secrets."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chalicelib.store import environments as environment_store
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import ARTIFACTS_YML, add_environment, allow_inline_deployments
from tests.functional.test_inline_deployments import build_deployments, build_messages
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account, add_project, new_account


def deploying_to(environment: dict[str, Any]) -> str:
    """An appveyor.yml that builds artifacts and deploys them to the environment (its name as a pusher writes it)."""
    return ARTIFACTS_YML + appveyor_yml("deploy:", "  - provider: Environment", f"    name: {environment['name']}")


def not_listed(environment: dict[str, Any], project: BuildProject) -> str:
    return (
        f"Inline deployment 1 (Environment) did not run: the environment '{environment['name']}' does not list this "
        f"project (projectId {project.project['projectId']}) among those whose appveyor.yml may deploy to it: whoever "
        "may update the environment adds it to the environment's settings.inlineDeploymentProjectIds (none are listed "
        "by default)."
    )


def test_a_pusher_cannot_deploy_their_project_to_an_environment_that_does_not_list_it(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    with WebhookReceiver() as production:
        environment = add_environment(
            account, "Webhook", {"url": production.url, "authorization": "Bearer prod"}, {"authorization"}
        )
        project = BuildProject(account, git_server, {"appveyor.yml": deploying_to(environment)})
        build = project.run()
        messages = build_messages(project, build, 1)
        received = list(production.requests)

    assert build["status"] == "success"
    assert received == []
    assert messages == [not_listed(environment, project)]
    assert account.api.get(f"{project.path}/deployments").json["deployments"] == []


def test_an_environment_takes_inline_deployments_from_the_projects_it_lists_only(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    with WebhookReceiver() as production:
        environment = add_environment(account, "Webhook", {"url": production.url})
        listed = BuildProject(account, git_server, {"appveyor.yml": deploying_to(environment)})
        other = BuildProject(account, git_server, {"appveyor.yml": deploying_to(environment)})
        allow_inline_deployments(account, environment, listed.project)
        listed_build, other_build = listed.run(), other.run()
        (deployment,) = build_deployments(listed, listed_build, 1)
        other_messages = build_messages(other, other_build, 1)
        received = [request.json["projectSlug"] for request in production.requests]

    assert deployment["status"] == "success"
    assert received == [listed.project["slug"]]
    assert other_messages == [not_listed(environment, other)]


def test_an_environment_stored_before_the_list_lists_no_project_and_updates_as_before(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    environment = add_environment(account, "Webhook", {"url": "http://127.0.0.1:9/"})
    project = BuildProject(account, git_server, {"appveyor.yml": deploying_to(environment)})
    stored = environment_store.get_environment(project.project["accountId"], environment["deploymentEnvironmentId"])
    assert stored is not None
    settings = {key: value for key, value in stored.settings.items() if key != "inlineDeploymentProjectIds"}
    environment_store.save_environment(stored, replace(stored, settings=settings))  # as an earlier version kept it
    path = f"/environments/{environment['deploymentEnvironmentId']}/settings"

    shown = account.api.get(path).json["environment"]
    build = project.run()
    messages = build_messages(project, build, 1)
    old_client = {
        **shown,
        "settings": {k: v for k, v in shown["settings"].items() if k != "inlineDeploymentProjectIds"},
    }
    kept = account.api.put("/environments", old_client)  # a client that knows nothing of the list keeps it

    assert shown["settings"]["inlineDeploymentProjectIds"] == []
    assert messages == [not_listed(environment, project)]
    assert kept.status == 200, kept.body
    allow_inline_deployments(account, environment, project.project)
    assert account.api.get(path).json["environment"]["settings"]["inlineDeploymentProjectIds"] == [
        project.project["projectId"]
    ]


def test_an_environment_lists_only_projects_of_its_own_account(account: Account, client: Any) -> None:
    environment = add_environment(account, "Webhook", {"url": "http://127.0.0.1:9/"})
    elsewhere = add_project(new_account(client), "octo/elsewhere")
    path = f"/environments/{environment['deploymentEnvironmentId']}/settings"
    shown = account.api.get(path).json["environment"]

    def listing(value: Any) -> int:
        return account.api.put(
            "/environments", {**shown, "settings": {**shown["settings"], "inlineDeploymentProjectIds": value}}
        ).status

    statuses = [listing([elsewhere["projectId"]]), listing(["1"]), listing(5), listing([0])]

    assert statuses == [400, 400, 400, 400]
    assert account.api.get(path).json["environment"]["settings"]["inlineDeploymentProjectIds"] == []
