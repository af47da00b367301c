"""/api/environments: list, settings, add, update, delete deployment environments."""

from __future__ import annotations

from typing import Any

from chalicelib.api.calls import Call
from chalicelib.domain.deployments import environments
from chalicelib.wire.environments import (
    environment_details,
    environment_summary,
    parse_environment_add,
    parse_environment_update,
)
from chalicelib.wire.fields import path_id


def list_environments(call: Call) -> list[dict[str, Any]]:
    return [environment_summary(environment) for environment in environments.list_environments(call.caller)]


def get_environment_settings(call: Call, deploymentEnvironmentId: str) -> dict[str, Any]:
    environment_id = path_id(deploymentEnvironmentId, "Environment")
    return {"environment": environment_details(environments.environment_settings(call.caller, environment_id))}


def add_environment(call: Call) -> dict[str, Any]:
    return environment_details(environments.add_environment(call.caller, parse_environment_add(call.json())))


def update_environment(call: Call) -> dict[str, Any]:
    environment_id, change = parse_environment_update(call.json())
    return environment_details(environments.update_environment(call.caller, environment_id, change))


def delete_environment(call: Call, deploymentEnvironmentId: str) -> None:
    environments.delete_environment(call.caller, path_id(deploymentEnvironmentId, "Environment"))
