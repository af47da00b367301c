"""/api/projects: add, change, delete; settings (JSON and YAML), environment variables, build number, cache.

The reads of a project with its builds, and the list, are project_reads.py: they load none of this.
"""

from __future__ import annotations

from typing import Any

from chalice import Response

from chalicelib.api.calls import Call
from chalicelib.api.http import plain_text
from chalicelib.domain.forges.repositories import MAX_REPOSITORY_NAME_LENGTH
from chalicelib.domain.projects import badges, project_lookup, project_settings, projects
from chalicelib.domain.projects.project_settings import MAX_BUILD_NUMBER
from chalicelib.domain.team.access import Right, has_right
from chalicelib.domain.team.roles import list_roles
from chalicelib.wire.fields import Fields
from chalicelib.wire.project_settings import parse_credentials, parse_settings_change, settings_json
from chalicelib.wire.projects import project_json


def add_project(call: Call) -> dict[str, Any]:
    fields = Fields(call.json())
    repository_name = fields.text("repositoryName", MAX_REPOSITORY_NAME_LENGTH)
    credentials = parse_credentials(fields)
    is_private = fields.boolean("isPrivate", default=True)  # public only when it says so
    provider = fields.text("repositoryProvider")
    project = projects.add_project(call.caller, provider, repository_name, credentials, is_private)
    return project_json(project, list_roles(call.caller))


def update_project(call: Call) -> None:
    project_settings.update_settings(call.caller, parse_settings_change(call.json(), list_roles(call.caller)))


def delete_project(call: Call, accountName: str, projectSlug: str) -> None:
    projects.delete_project(call.caller, accountName, projectSlug)


def get_settings(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    project = badges.with_badge_id(project_lookup.find_project(call.caller, accountName, projectSlug))
    may_update = has_right(call.caller, project, Right.UPDATE)
    return settings_json(project, list_roles(call.caller), call.base_url, may_update)


def get_settings_yaml(call: Call, accountName: str, projectSlug: str) -> Response:
    return plain_text(project_settings.settings_yaml(call.caller, accountName, projectSlug))


def update_settings_yaml(call: Call, accountName: str, projectSlug: str) -> None:
    project_settings.update_settings_yaml(call.caller, accountName, projectSlug, call.text())


def get_environment_variables(call: Call, accountName: str, projectSlug: str) -> list[dict[str, Any]]:
    return project_settings.environment_variables(call.caller, accountName, projectSlug)


def update_environment_variables(call: Call, accountName: str, projectSlug: str) -> None:
    project_settings.update_environment_variables(call.caller, accountName, projectSlug, call.json())


def update_build_number(call: Call, accountName: str, projectSlug: str) -> None:
    number = Fields(call.json()).integer("nextBuildNumber", 1, MAX_BUILD_NUMBER)
    project_settings.set_next_build_number(call.caller, accountName, projectSlug, number)


def delete_build_cache(call: Call, accountName: str, projectSlug: str) -> None:
    projects.delete_build_cache(call.caller, accountName, projectSlug)
