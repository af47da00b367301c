"""/api/projects: add, list, read with its builds (last, by branch, by version, history), settings (JSON and
YAML), environment variables, build number, cache, delete. A public project's reads with its builds need no key."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from chalice import Response

from chalicelib.api.calls import Call
from chalicelib.api.http import plain_text
from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.domain import badges, build_reads, project_settings, projects
from chalicelib.domain.access import Right, has_right
from chalicelib.domain.project_settings import MAX_BUILD_NUMBER
from chalicelib.domain.repositories import MAX_REPOSITORY_NAME_LENGTH
from chalicelib.domain.roles import list_roles
from chalicelib.shapes.builds import build_json
from chalicelib.wire.fields import Fields, query_integer
from chalicelib.wire.projects import parse_credentials, parse_settings_change, project_json, settings_json

MAX_HISTORY = 100


def list_projects(call: Call) -> list[dict[str, Any]]:
    roles = list_roles(call.caller)
    return [
        project_json(project, roles, [build_json(project.last_build)] if project.last_build else [])
        for project in projects.visible_projects(call.caller)
    ]


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
    project = badges.with_badge_id(projects.find_project(call.caller, accountName, projectSlug))
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


# Project reads that show builds.


def _with_build(call: Call, project: Project, build: Build | None) -> dict[str, Any]:
    shape: dict[str, Any] = {"project": project_json(project, list_roles(call.caller))}
    if build is not None:
        shape["build"] = build_json(build, build_reads.jobs_of(build))
    return shape


def get_project_last_build(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    return _with_build(call, *build_reads.last_build(call.caller, accountName, projectSlug))


def get_project_branch_build(call: Call, accountName: str, projectSlug: str, buildBranch: str) -> dict[str, Any]:
    return _with_build(call, *build_reads.last_build(call.caller, accountName, projectSlug, unquote(buildBranch)))


def get_project_build_by_version(call: Call, accountName: str, projectSlug: str, buildVersion: str) -> dict[str, Any]:
    version = unquote(buildVersion)
    return _with_build(call, *build_reads.build_by_version(call.caller, accountName, projectSlug, version))


def get_project_history(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    query: dict[str, str] = dict(call.request.query_params or {})
    records = query_integer(query, "recordsNumber", required=True, minimum=1, maximum=MAX_HISTORY) or MAX_HISTORY
    start = query_integer(query, "startBuildId", minimum=1)
    branch = query.get("branch") or None
    project, page = build_reads.history(call.caller, accountName, projectSlug, records, start, branch)
    return {"project": project_json(project, list_roles(call.caller)), "builds": [build_json(b) for b in page]}
