"""Helpers for deployment tests: an environment through the API, a built project to deploy, waiting."""

from __future__ import annotations

from typing import Any

from chalicelib.store import deployments as deployment_store
from tests.builds import BuildProject, appveyor_yml, settle
from tests.support import Account, unique

FINISHED = {"success", "failed", "cancelled"}
ARTIFACTS_YML = appveyor_yml(
    "build_script:",
    "  - mkdir -p out site && echo app-$APPVEYOR_BUILD_VERSION > out/app.txt && echo '<h1>hi</h1>' > site/index.html",
    "artifacts:",
    "  - path: out/app.txt",
    "    name: app",
    "  - path: site/index.html",
    "    name: site",
)


def named(name: str, value: str, secure: bool = False) -> dict[str, Any]:
    return {"name": name, "value": {"isEncrypted": secure, "value": value}}


def add_environment(
    account: Account,
    provider: str,
    settings: dict[str, str],
    secure: set[str] = frozenset(),
    **variables: str,  # type: ignore[assignment]
) -> dict[str, Any]:
    """A new environment of ``provider`` through the API; ``secure`` names the settings that are secrets."""
    reply = account.api.post(
        "/environments",
        {
            "name": unique("env"),
            "provider": provider,
            "settings": {
                "providerSettings": [named(name, value, name in secure) for name, value in settings.items()],
                "environmentVariables": [named(name, value) for name, value in variables.items()],
            },
        },
    )
    assert reply.status == 200, reply.body
    return reply.json


def deploy(project: BuildProject, environment: dict[str, Any], version: str, **fields: Any) -> Any:
    """POST /api/deployments; the reply."""
    return project.account.api.post(
        "/deployments",
        {
            "environmentName": environment["name"],
            "accountName": project.project["accountName"],
            "projectSlug": project.project["slug"],
            "buildVersion": version,
            **fields,
        },
    )


def wait_for_deployment(
    account: Account, deployment_id: int, statuses: set[str] = FINISHED, seconds: float = 60
) -> dict[str, Any]:
    def stored_status(_: dict[str, Any]) -> str | None:
        stored = deployment_store.get_deployment_by_id(deployment_id)
        return None if stored is None else stored.status

    def read() -> dict[str, Any]:
        return dict(account.api.get(f"/deployments/{deployment_id}").json["deployment"])

    return settle(read, stored_status, statuses, seconds, f"deployment {deployment_id}")
