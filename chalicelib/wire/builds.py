"""Build shapes: the Build, its BuildJobs, artifacts; and the start-build body."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from chalicelib.core.jobs import JobArtifact
from chalicelib.domain.builds.builds import StartRequest
from chalicelib.domain.builds.job_files import ArtifactQuery
from chalicelib.domain.shared.validation import invalid
from chalicelib.shapes.time import timestamp
from chalicelib.wire.fields import Fields, bounded_variables


def artifact_json(artifact: JobArtifact) -> dict[str, Any]:
    return {
        "fileName": artifact.file_name,
        "name": artifact.name,
        "type": artifact.type,
        "size": artifact.size,
        "created": timestamp(artifact.created),
    }


def parse_start_request(body: Any) -> StartRequest:
    """POST /api/builds: the three forms share one body; it may also arrive form-encoded."""
    fields = Fields(body)
    variables = body.get("environmentVariables") if isinstance(body, dict) else None
    if variables is None:
        variables = {}
    if not isinstance(variables, dict) or not all(
        isinstance(name, str) and name and isinstance(value, str | int | float | bool)
        for name, value in variables.items()
    ):
        raise invalid("environmentVariables", "environmentVariables must be an object of names to string values.")
    pull_request = body.get("pullRequestId") if isinstance(body, dict) else None
    return StartRequest(
        account_name=fields.text("accountName"),
        project_slug=fields.text("projectSlug"),
        branch=fields.optional_text("branch") or None,
        commit_id=fields.optional_text("commitId") or None,
        pull_request_id=None if pull_request in (None, "") else fields.identifier("pullRequestId"),
        tag=fields.optional_text("tag") or None,
        environment_variables=bounded_variables(
            "environmentVariables", {name: _text(value) for name, value in variables.items()}
        ),
    )


def form_body(text: str) -> dict[str, Any]:
    """A form-encoded start request as the JSON body it stands for (``environmentVariables[NAME]=value`` too)."""
    body: dict[str, Any] = {}
    variables: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True):
        if name.startswith("environmentVariables[") and name.endswith("]"):
            variables[name[len("environmentVariables[") : -1]] = value
        else:
            body[name] = value
    if variables:
        body["environmentVariables"] = variables
    return body


def _text(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_artifact_query(query: dict[str, str]) -> ArtifactQuery:
    """The permalink's query: ``branch``, ``tag``, ``job`` (a job's name), ``all=true``, ``pr=true|false``."""
    return ArtifactQuery(
        branch=query.get("branch") or None,
        tag=query.get("tag") or None,
        job=query.get("job") or None,
        all_builds=_query_flag(query, "all") is True,
        pull_requests=_query_flag(query, "pr"),
    )


def wants_redirect(query: dict[str, str]) -> bool:
    """An artifact's download: a 302 to it (by default), or with ``redirect=false`` its URL in JSON, for a client
    that cannot read a redirect's Location (a page's fetch) yet must send a Bearer key to be given it."""
    return _query_flag(query, "redirect") is not False


def _query_flag(query: dict[str, str], name: str) -> bool | None:
    value = (query.get(name) or "").lower()
    if value in ("", "true", "false"):
        return None if not value else value == "true"
    raise invalid(name, f"{name} is true or false.")
