"""Environment shapes: the summary lists show, the settings form, and the add and update bodies."""

from __future__ import annotations

from typing import Any

from chalicelib.core.deployments import EnvironmentAtStart
from chalicelib.core.environments import Environment
from chalicelib.domain.deployments.environments import (
    MAX_ACCESS_KEY_FIELD_LENGTH,
    EnvironmentDetails,
    EnvironmentInput,
    inline_deployment_projects,
)
from chalicelib.domain.shared.validation import MAX_NAME_LENGTH, MAX_TEXT_LENGTH, invalid, too_long
from chalicelib.shapes.time import optional_timestamps, timestamp
from chalicelib.wire.fields import Fields


def environment_summary(environment: Environment | EnvironmentAtStart) -> dict[str, Any]:
    """An environment as lists (and deployments, as it was when they started) show it: no settings, no access key."""
    return {
        "deploymentEnvironmentId": environment.environment_id,
        "name": environment.name,
        "provider": environment.provider,
        "created": timestamp(environment.created),
        **optional_timestamps(updated=environment.updated),
    }


def environment_details(details: EnvironmentDetails) -> dict[str, Any]:
    """An environment with its settings, and its access key when the caller may see it."""
    environment = details.environment
    shape: dict[str, Any] = {
        "deploymentEnvironmentId": environment.environment_id,
        "name": environment.name,
        "provider": environment.provider,
    }
    if details.access_key is not None:
        shape["environmentAccessKey"] = details.access_key
    shape["settings"] = {
        "providerSettings": environment.settings.get("providerSettings", []),
        "environmentVariables": environment.settings.get("environmentVariables", []),
        "notifications": environment.settings.get("notifications", []),
        "inlineDeploymentProjectIds": inline_deployment_projects(environment),
    }
    return {**shape, "created": timestamp(environment.created), **optional_timestamps(updated=environment.updated)}


def parse_environment_add(body: Any) -> EnvironmentInput:
    """The body of POST /api/environments: name, provider, settings."""
    fields = Fields(body)
    name = fields.text("name", MAX_NAME_LENGTH)
    provider = fields.text("provider")
    return _input(fields, name, provider)


def parse_environment_update(body: Any) -> tuple[int, EnvironmentInput]:
    """The environment id and the body of PUT /api/environments (the environment as its settings GET shows it).

    The contract puts ``provider`` inside ``settings``; a top-level ``provider`` (as GET shows it) is
    accepted too, and ``settings.provider`` wins when both are sent. Neither keeps the stored provider.
    """
    fields = Fields(body)
    environment_id = fields.identifier("deploymentEnvironmentId")
    name = fields.text("name", MAX_NAME_LENGTH)
    settings = _settings(fields)
    provider = _optional_text(settings, "provider", "settings.provider") or fields.optional_text("provider") or None
    access_key = fields.optional_text("environmentAccessKey", MAX_ACCESS_KEY_FIELD_LENGTH)
    return environment_id, _input(fields, name, provider, access_key)


def _input(fields: Fields, name: str, provider: str | None, access_key: str | None = None) -> EnvironmentInput:
    settings = _settings(fields)
    for required in ("providerSettings", "environmentVariables"):
        if settings.get(required) is None:
            raise invalid(f"settings.{required}", f"settings.{required} is required.")
    return EnvironmentInput(
        name=name,
        provider=provider,
        provider_settings=settings["providerSettings"],
        environment_variables=settings["environmentVariables"],
        notifications=settings.get("notifications"),
        access_key=access_key,
        inline_projects=settings.get("inlineDeploymentProjectIds"),
    )


def _settings(fields: Fields) -> dict[str, Any]:
    settings = fields.body.get("settings")
    if settings is None:
        raise invalid("settings", "settings is required.")
    if not isinstance(settings, dict):
        raise invalid("settings", "settings must be an object.")
    return settings


def _optional_text(body: dict[str, Any], name: str, field: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise invalid(field, f"{field} must be a string.")
    if value is not None and len(value) > MAX_TEXT_LENGTH:
        raise too_long(field, MAX_TEXT_LENGTH)
    return value or None
