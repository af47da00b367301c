"""Helpers for deployment tests: an environment through the API, a built project to deploy, waiting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from chalicelib.deploy.base import Delivery, DeployArtifact
from chalicelib.store import deployments as deployment_store
from tests.builds import BuildProject, appveyor_yml, settle
from tests.storage import put_artifact
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


def allow_inline_deployments(account: Account, environment: dict[str, Any], *projects: dict[str, Any]) -> None:
    """List the projects among those whose appveyor.yml may deploy to the environment (``provider: Environment``)."""
    path = f"/environments/{environment['deploymentEnvironmentId']}/settings"
    shown = account.api.get(path).json["environment"]
    shown["settings"]["inlineDeploymentProjectIds"] = [project["projectId"] for project in projects]
    reply = account.api.put("/environments", shown)
    assert reply.status == 200, reply.body


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


def deployed(project: BuildProject, environment: dict[str, Any], version: str, **fields: Any) -> dict[str, Any]:
    """Start a deployment and wait for it to finish; the finished deployment."""
    reply = deploy(project, environment, version, **fields)
    assert reply.status == 200, reply.body
    return wait_for_deployment(project.account, reply.json["deploymentId"])


def deployment_log(project: BuildProject, deployment: dict[str, Any]) -> str:
    """The log of the deployment's one job."""
    (job,) = deployment["jobs"]
    return project.log(job["jobId"])


class Log(list[str]):
    """A deployment's log lines, as a provider writes them."""

    def __call__(self, line: str) -> None:
        self.append(line)


def stored_artifact(folder: Path, file_name: str, content: bytes, name: str = "", kind: str = "Auto") -> DeployArtifact:
    """An artifact of a fresh job, stored as the runner stores it."""
    local = folder / unique("artifact")
    local.write_bytes(content)
    job_prefix = f"builds/1/2/3/{unique('job')}/"
    size = put_artifact(job_prefix, file_name, local)
    return DeployArtifact(file_name, name or PurePosixPath(file_name).stem, kind, size, job_prefix)


def delivery(
    settings: dict[str, str],
    artifacts: list[DeployArtifact],
    should_stop: Callable[[], bool] = lambda: False,
    **variables: str,
) -> Delivery:
    """What a provider is handed for build 1.0.7 of a git project (``variables`` added to its APPVEYOR_* ones)."""
    return Delivery(
        settings=settings,
        artifacts=artifacts,
        variables={"APPVEYOR_BUILD_VERSION": "1.0.7", "APPVEYOR_REPO_PROVIDER": "git", **variables},
        context={"commit": {"commitId": "abc123"}},
        log=Log(),
        should_stop=should_stop,
    )
