"""/api/projects reads: the list, and a project with its builds (last, by branch, by version, history). A public
project's reads with its builds need no key.

Apart from projects.py (adding, changing and deleting a project, its settings), so that a function whose first
request reads a project loads none of what changes one (docs/architecture.md, "What a cold start loads").
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from chalicelib.api.calls import Call
from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.domain.builds import build_lookup
from chalicelib.domain.projects import project_lookup
from chalicelib.domain.team.roles import list_roles
from chalicelib.shapes.builds import build_json
from chalicelib.wire.fields import query_integer
from chalicelib.wire.projects import project_json

MAX_HISTORY = 100


def list_projects(call: Call) -> list[dict[str, Any]]:
    roles = list_roles(call.caller)
    return [
        project_json(project, roles, [build_json(project.last_build)] if project.last_build else [])
        for project in project_lookup.visible_projects(call.caller)
    ]


def _with_build(call: Call, project: Project, build: Build | None) -> dict[str, Any]:
    shape: dict[str, Any] = {"project": project_json(project, list_roles(call.caller))}
    if build is not None:
        shape["build"] = build_json(build, build_lookup.jobs_of(build))
    return shape


def get_project_last_build(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    return _with_build(call, *build_lookup.last_build(call.caller, accountName, projectSlug))


def get_project_branch_build(call: Call, accountName: str, projectSlug: str, buildBranch: str) -> dict[str, Any]:
    return _with_build(call, *build_lookup.last_build(call.caller, accountName, projectSlug, unquote(buildBranch)))


def get_project_build_by_version(call: Call, accountName: str, projectSlug: str, buildVersion: str) -> dict[str, Any]:
    version = unquote(buildVersion)
    return _with_build(call, *build_lookup.build_by_version(call.caller, accountName, projectSlug, version))


def get_project_history(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    query: dict[str, str] = dict(call.request.query_params or {})
    records = query_integer(query, "recordsNumber", required=True, minimum=1, maximum=MAX_HISTORY) or MAX_HISTORY
    start = query_integer(query, "startBuildId", minimum=1)
    branch = query.get("branch") or None
    project, page = build_lookup.history(call.caller, accountName, projectSlug, records, start, branch)
    return {"project": project_json(project, list_roles(call.caller)), "builds": [build_json(b) for b in page]}
