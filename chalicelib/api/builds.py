"""/api/builds and /api/buildjobs: start, re-run, cancel, delete; a job's log, artifacts, messages and tests.
A project's builds are read through /api/projects (api/projects.py). A public project's logs and artifacts
need no key (its jobs' messages and tests do, as every other route)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from chalice import Response

from chalicelib.api.http import ApiBlueprint, Call, VisitorOf, job_visitor, project_visitor
from chalicelib.core.logs import ByteRange
from chalicelib.domain import builds, job_files, job_reports
from chalicelib.domain.permissions import Permission
from chalicelib.shapes.builds import build_json
from chalicelib.wire.builds import artifact_json, form_body, parse_artifact_query, parse_start_request
from chalicelib.wire.fields import Fields, path_id
from chalicelib.wire.reports import message_json, reported_test_json

api = ApiBlueprint(__name__)
_ARTIFACT_DEPTH = 4  # fileName may hold "/" unencoded: routes for up to this many segments


@api.route("/builds", "POST", Permission.RUN_PROJECT_BUILD)
def start_build(call: Call) -> dict[str, Any]:
    content_type = call.request.headers.get("content-type", "")
    body = form_body(call.text()) if "form-urlencoded" in content_type else call.json()
    build, _ = builds.start_build(call.caller, parse_start_request(body))
    return build_json(build)


@api.route("/builds", "PUT", Permission.RUN_PROJECT_BUILD)
def rerun_build(call: Call) -> dict[str, Any]:
    fields = Fields(call.json())
    incomplete = fields.body.get("reRunIncomplete")
    if isinstance(incomplete, str) and incomplete.lower() in ("true", "false"):
        fields.body["reRunIncomplete"] = incomplete.lower() == "true"
    build, jobs = builds.rerun_build(call.caller, fields.identifier("buildId"), fields.boolean("reRunIncomplete"))
    return build_json(build, jobs)


@api.route("/builds/{accountName}/{projectSlug}/{buildVersion}", "DELETE", Permission.RUN_PROJECT_BUILD)
def cancel_build(call: Call, accountName: str, projectSlug: str, buildVersion: str) -> None:
    builds.cancel_build(call.caller, accountName, projectSlug, buildVersion)


@api.route("/builds/{buildId}", "DELETE", Permission.DELETE_PROJECT_BUILDS)
def delete_build(call: Call, buildId: str) -> None:
    builds.delete_build(call.caller, path_id(buildId, "Build"))


@api.route("/buildjobs/{jobId}/log", visitor=job_visitor)
def get_job_log(call: Call, jobId: str) -> Response:
    reply = job_files.job_log(call.caller, jobId, _byte_range(call.request.headers.get("range", "")))
    if reply.redirect_url:
        return Response(body="", status_code=302, headers={"Location": reply.redirect_url})
    part = reply.part
    if part is not None and part.start == part.end:
        message = f"The log has {part.total} bytes so far: the range asked for starts past them."
        past_end: dict[str, str | list[str]] = {"Content-Range": f"bytes */{part.total}"}
        past_end["Content-Type"] = "application/json"
        return Response(body={"message": message}, status_code=416, headers=past_end)
    headers: dict[str, str | list[str]] = {"Content-Type": "text/plain; charset=utf-8", "Accept-Ranges": "bytes"}
    if part is not None:
        headers["Content-Range"] = f"bytes {part.start}-{part.end - 1}/{part.total}"
    text = (reply.text or b"").decode("utf-8", errors="replace")  # the runner writes UTF-8 lines
    return Response(body=text, status_code=200 if part is None else 206, headers=headers)


def _byte_range(header: str) -> ByteRange | None:
    """``Range: bytes=first-[last]`` or ``bytes=-count``; None for anything else (ignored, as HTTP allows)."""
    match = re.fullmatch(r"\s*bytes\s*=\s*([0-9]{0,18})\s*-\s*([0-9]{0,18})\s*", header)
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = (int(group) if group else None for group in match.groups())
    if first is not None and last is not None and last < first:
        return None
    return ByteRange(first, last)


@api.route("/buildjobs/{jobId}/artifacts", visitor=job_visitor)
def list_job_artifacts(call: Call, jobId: str) -> list[dict[str, Any]]:
    job, _ = builds.find_job(call.caller, jobId)
    return [artifact_json(artifact) for artifact in job.artifacts]


@api.route("/buildjobs/{jobId}/messages")
def list_job_messages(call: Call, jobId: str) -> list[dict[str, Any]]:
    return [message_json(report) for report in job_reports.job_messages(call.caller, jobId)]


@api.route("/buildjobs/{jobId}/tests")
def list_job_tests(call: Call, jobId: str) -> list[dict[str, Any]]:
    return [reported_test_json(report) for report in job_reports.job_tests(call.caller, jobId)]


def _file_route(prefix: str, name: str, depth: int, url_of: Callable[..., str], visitor: VisitorOf) -> None:
    """A route for files named by ``depth`` path segments below ``prefix`` (fileName may hold "/" unencoded): it
    answers 302 to ``url_of(call, file_name, **the route's other parameters)``, to ``visitor`` too."""
    parts = [f"part{index}" for index in range(1, depth + 1)]

    def download(call: Call, **params: str) -> Response:
        file_name = "/".join(unquote(params.pop(part)) for part in parts)
        return Response(body="", status_code=302, headers={"Location": url_of(call, file_name, **params)})

    download.__name__ = f"{name}_{depth}"
    api.route(prefix + "/".join("{" + part + "}" for part in parts), visitor=visitor)(download)


def _job_artifact_url(call: Call, file_name: str, jobId: str) -> str:
    return job_files.artifact_url(call.caller, jobId, file_name)


def _last_artifact_url(call: Call, file_name: str, accountName: str, projectSlug: str) -> str:
    query = parse_artifact_query(dict(call.request.query_params or {}))
    return job_files.last_artifact_url(call.caller, accountName, projectSlug, file_name, query)


for _depth in range(1, _ARTIFACT_DEPTH + 1):
    _file_route("/buildjobs/{jobId}/artifacts/", "download_artifact", _depth, _job_artifact_url, job_visitor)
    _file_route(
        "/projects/{accountName}/{projectSlug}/artifacts/",
        "download_last_artifact",
        _depth,
        _last_artifact_url,
        project_visitor,
    )
