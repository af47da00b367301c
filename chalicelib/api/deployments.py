"""/api/deployments: start, stop, read; a project's and an environment's deployments."""

from __future__ import annotations

from typing import Any

from chalicelib.api.calls import Call
from chalicelib.domain.deployments import deployments
from chalicelib.domain.team.roles import list_roles
from chalicelib.wire.deployments import deployment_json, parse_start_request
from chalicelib.wire.environments import environment_summary
from chalicelib.wire.fields import Fields, path_id, query_integer
from chalicelib.wire.projects import project_json


def start_deployment(call: Call) -> dict[str, Any]:
    deployment, jobs, build, _ = deployments.start_deployment(call.caller, parse_start_request(call.json()))
    return deployment_json(deployment, build, jobs)


def stop_deployment(call: Call) -> None:
    deployments.stop_deployment(call.caller, Fields(call.json()).identifier("deploymentId"))


def get_deployment(call: Call, deploymentId: str) -> dict[str, Any]:
    project, shown = deployments.deployment_details(call.caller, path_id(deploymentId, "Deployment"))
    return {"project": project_json(project, list_roles(call.caller)), "deployment": _deployment_json(shown)}


def get_project_deployments(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    query: dict[str, str] = dict(call.request.query_params or {})
    records = query_integer(query, "recordsNumber", minimum=1, maximum=deployments.MAX_PAGE) or deployments.MAX_PAGE
    start = query_integer(query, "startDeploymentId", minimum=1)
    project, page = deployments.project_deployments(call.caller, accountName, projectSlug, records, start)
    return {
        "project": project_json(project, list_roles(call.caller)),
        "deployments": [
            {"environment": environment_summary(shown.deployment.environment), "deployment": _deployment_json(shown)}
            for shown in page
        ],
    }


def get_environment_deployments(call: Call, deploymentEnvironmentId: str) -> dict[str, Any]:
    environment, page = deployments.environment_deployments(
        call.caller, path_id(deploymentEnvironmentId, "Environment")
    )
    roles = list_roles(call.caller)
    return {
        "environment": environment_summary(environment),
        "deployments": [
            {"project": project_json(shown.project, roles), "deployment": _deployment_json(shown)}
            for shown in page
            if shown.project is not None
        ],
    }


def _deployment_json(shown: deployments.Shown) -> dict[str, Any]:
    return deployment_json(shown.deployment, shown.build, shown.jobs)
