"""/api/builds and /api/buildjobs: start, re-run, cancel, delete; a job's log, artifacts, messages and tests.
A project's builds are read through /api/projects (api/project_reads.py). A public project's logs and artifacts
need no key (its jobs' messages and tests do, as every other route)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from chalice import Response

from chalicelib.api.calls import Call
from chalicelib.core.logs import ByteRange
from chalicelib.domain.builds import build_lookup, builds, job_files, job_reports
from chalicelib.shapes.builds import build_json
from chalicelib.wire.builds import (
    artifact_json,
    form_body,
    parse_artifact_query,
    parse_start_request,
    wants_redirect,
)
from chalicelib.wire.fields import Fields, path_id
from chalicelib.wire.reports import message_json, reported_test_json


def start_build(call: Call) -> dict[str, Any]:
    content_type = call.request.headers.get("content-type", "")
    body = form_body(call.text()) if "form-urlencoded" in content_type else call.json()
    build, _ = builds.start_build(call.caller, parse_start_request(body))
    return build_json(build)


def rerun_build(call: Call) -> dict[str, Any]:
    fields = Fields(call.json())
    incomplete = fields.body.get("reRunIncomplete")
    if isinstance(incomplete, str) and incomplete.lower() in ("true", "false"):
        fields.body["reRunIncomplete"] = incomplete.lower() == "true"
    build, jobs = builds.rerun_build(call.caller, fields.identifier("buildId"), fields.boolean("reRunIncomplete"))
    return build_json(build, jobs)


def cancel_build(call: Call, accountName: str, projectSlug: str, buildVersion: str) -> None:
    builds.cancel_build(call.caller, accountName, projectSlug, buildVersion)


def delete_build(call: Call, buildId: str) -> None:
    builds.delete_build(call.caller, path_id(buildId, "Build"))


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


def list_job_artifacts(call: Call, jobId: str) -> list[dict[str, Any]]:
    job, _ = build_lookup.find_job(call.caller, jobId)
    return [artifact_json(artifact) for artifact in job.artifacts]


def list_job_messages(call: Call, jobId: str) -> list[dict[str, Any]]:
    return [message_json(report) for report in job_reports.job_messages(call.caller, jobId)]


def list_job_tests(call: Call, jobId: str) -> list[dict[str, Any]]:
    return [reported_test_json(report) for report in job_reports.job_tests(call.caller, jobId)]


def download_artifact(call: Call, jobId: str, **parts: str) -> Response:
    """302 to a job's artifact, named by the path's segments after ``artifacts/`` (``part1``, ``part2``, ...: a
    file name may hold "/" unencoded); with ``redirect=false``, 200 and its short-lived URL in JSON."""
    query = dict(call.request.query_params or {})
    return _download(job_files.artifact_url(call.caller, jobId, _file_name(parts)), wants_redirect(query))


def download_last_artifact(call: Call, accountName: str, projectSlug: str, **parts: str) -> Response:
    """302 to an artifact of the project's last build (that the query selects), named as download_artifact's."""
    params = dict(call.request.query_params or {})
    query = parse_artifact_query(params)
    file_name = _file_name(parts)
    url = job_files.last_artifact_url(call.caller, accountName, projectSlug, file_name, query)
    return _download(url, wants_redirect(params))


def _file_name(parts: dict[str, str]) -> str:
    return "/".join(unquote(parts[f"part{index}"]) for index in range(1, len(parts) + 1))


def _download(url: str, redirect: bool) -> Response:
    if not redirect:
        return Response(body={"url": url}, status_code=200, headers={"Cache-Control": "no-store"})
    return Response(body="", status_code=302, headers={"Location": url})
