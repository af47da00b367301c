"""/api/runner/jobs/{jobId}: the job protocol, what a build's runner calls, authenticated by its job token only.

GET  /api/runner/jobs/{jobId}                  -> the job's spec
GET  /api/runner/jobs/{jobId}/runner           -> the runner as a zip (for executors that start from an image)
POST /api/runner/jobs/{jobId}/clone-credentials -> {"username", "password"}, once per attempt (then 409)
POST /api/runner/jobs/{jobId}/heartbeat        -> {"status": "running" | "cancelling", "message": why cancelled}
PUT  /api/runner/jobs/{jobId}/log/{index}      raw bytes (a masked chunk of the log) -> 204
POST /api/runner/jobs/{jobId}/artifacts        {"fileName", "size"} -> {"url", "headers"}
POST /api/runner/jobs/{jobId}/cache/entries    {"ids": [...]} -> {"entries": {id: {...} | null}, "save": bool}
POST /api/runner/jobs/{jobId}/cache/uploads    {"id", "size", "metadata"} -> {"url", "headers"}
POST /api/runner/jobs/{jobId}/cache/prune      {"keep": [...]} -> {"deleted": n}
POST /api/runner/jobs/{jobId}/messages         {"messages": [...]} -> 204
POST|PUT /api/runner/jobs/{jobId}/tests        {"tests": [...]} -> 204
PUT  /api/runner/jobs/{jobId}/build            {"version"} -> 204
POST /api/runner/jobs/{jobId}/quarantine       {} -> {"quarantined": [names]}: the job's failed tests, if all are
                                                in its project's quarantine (its test_script failure fails nothing)
POST /api/runner/jobs/{jobId}/finish           {"result", "message", "logChunks", "artifacts"[, "logTail",
                                                "logTailSent"]} -> 204

A finish may carry the log's last chunk, rather than the runner PUT it: ``logTail``, the masked chunk
``logChunks - 1`` in base64 (at most a chunk's 2 MiB, and a 1 MiB body in all), and ``logTailSent``, whether the
runner PUT a version of that chunk before (true when missing). A log of one chunk never sent is written as the
finished log with one S3 put; a longer one is sealed with the tail stored as its last chunk. A finish without
``logTail`` (older runners) seals the chunks sent, as ever. A runner sends a tail only when its spec says
``"logTailOnFinish": true``: a service from before tails would seal the log without it.

A token names one job: any other job id, or the job once ended, is a 401 and changes nothing.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response, json_body, respond
from chalicelib.core.jobs import Job
from chalicelib.domain.job_identity import job_tokens
from chalicelib.domain.job_protocol import job_reports, job_specs, runner_cache, runner_calls
from chalicelib.domain.shared.validation import invalid
from chalicelib.errors import ConveyorError, Invalid, NotFound
from chalicelib.wire.fields import Fields


def _runner_call(request: Request, job_id: str, view: Callable[[Job], Any], **params: str) -> Response:
    try:
        check_parameters(request, {"jobId": job_id, **params})
        job = job_tokens.runner_job(job_id, request.headers.get("authorization"))
        return respond(view(job))
    except ConveyorError as error:
        return error_response(error)


def _runner_call_reading(
    request: Request, job_id: str, view: Callable[[job_tokens.RunnerJob], Any], project: bool
) -> Response:
    """``_runner_call`` for a view that needs the job's build (and ``project``): read with the job when its token
    names them."""
    try:
        check_parameters(request, {"jobId": job_id})
        return respond(view(job_tokens.runner_job_with_build(job_id, request.headers.get("authorization"), project)))
    except ConveyorError as error:
        return error_response(error)


def _fields(request: Request) -> Fields:
    return Fields(json_body(request))


def _texts(values: list[Any], name: str) -> list[str]:
    if not all(isinstance(value, str) for value in values):
        raise Invalid(f"{name} must be an array of strings.")
    return values


def _objects(values: list[Any], name: str) -> list[dict[str, Any]]:
    if not all(isinstance(value, dict) for value in values):
        raise Invalid(f"{name} must be an array of objects.")
    return values


def _base64(fields: Fields, name: str, max_bytes: int) -> bytes | None:
    """An optional field of bytes in standard base64 (a 400 naming it when it is not), or None."""
    text = fields.optional_text(name, 4 * -(-max_bytes // 3))
    if text is None:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as error:
        raise invalid(name, f"{name} must be base64.") from error


def spec(request: Request, jobId: str) -> Response:
    return _runner_call_reading(
        request, jobId, lambda runner: job_specs.job_spec(runner.job, (runner.build, runner.project)), project=True
    )


def runner_package(request: Request, jobId: str) -> Response:
    def view(job: Job) -> Response:
        headers: dict[str, str | list[str]] = {"Content-Type": "application/zip", "Cache-Control": "no-store"}
        return Response(body=job_specs.runner_package(job), status_code=200, headers=headers)

    return _runner_call(request, jobId, view)


def clone_credentials(request: Request, jobId: str) -> Response:
    return _runner_call(request, jobId, job_specs.clone_credentials)


# named apart from the agents' heartbeat: view names are operationIds
def runner_heartbeat(request: Request, jobId: str) -> Response:
    try:
        check_parameters(request, {"jobId": jobId})
        return respond(job_tokens.heartbeat(jobId, request.headers.get("authorization")))
    except ConveyorError as error:
        return error_response(error)


def put_log_chunk(request: Request, jobId: str, index: str) -> Response:
    def view(job: Job) -> None:
        if not index.isascii() or not index.isdigit():
            raise NotFound("A log chunk is named by its number.")
        body = request.raw_body or b""
        runner_calls.put_log_chunk(job, int(index), body if isinstance(body, bytes) else body.encode())

    return _runner_call(request, jobId, view, index=index)


def artifact_upload(request: Request, jobId: str) -> Response:
    def view(job: Job) -> Any:
        fields = _fields(request)
        return runner_calls.artifact_upload(job, fields.text("fileName", 1024), fields.integer("size", minimum=0))

    return _runner_call(request, jobId, view)


def cache_entries(request: Request, jobId: str) -> Response:
    return _runner_call(
        request, jobId, lambda job: runner_cache.cache_entries(job, _texts(_fields(request).array("ids"), "ids"))
    )


def cache_upload(request: Request, jobId: str) -> Response:
    def view(job: Job) -> Any:
        fields = _fields(request)
        metadata = fields.body.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise Invalid("metadata must be an object.")
        return runner_cache.cache_upload(job, fields.text("id", 16), fields.integer("size", minimum=0), metadata)

    return _runner_call(request, jobId, view)


def cache_prune(request: Request, jobId: str) -> Response:
    return _runner_call(
        request,
        jobId,
        lambda job: {"deleted": runner_cache.cache_prune(job, _texts(_fields(request).array("keep"), "keep"))},
    )


def add_messages(request: Request, jobId: str) -> Response:
    return _runner_call(
        request,
        jobId,
        lambda job: job_reports.add_messages(job, _objects(_fields(request).array("messages"), "messages")),
    )


def add_tests(request: Request, jobId: str) -> Response:
    return _runner_call(
        request,
        jobId,
        lambda job: job_reports.add_tests(job, _objects(_fields(request).array("tests"), "tests"), False),
    )


def update_tests(request: Request, jobId: str) -> Response:
    return _runner_call(
        request,
        jobId,
        lambda job: job_reports.add_tests(job, _objects(_fields(request).array("tests"), "tests"), True),
    )


def quarantine(request: Request, jobId: str) -> Response:
    def view(job: Job) -> dict[str, Any]:
        from chalicelib.domain.testing import tests_history  # only jobs whose test_script failed ask: cold start

        return {"quarantined": tests_history.quarantine_job_failures(job)}

    return _runner_call(request, jobId, view)


def update_build(request: Request, jobId: str) -> Response:
    return _runner_call(
        request, jobId, lambda job: runner_calls.update_version(job, _fields(request).text("version", 256))
    )


def runner_finish(request: Request, jobId: str) -> Response:
    def view(runner: job_tokens.RunnerJob) -> None:
        fields = _fields(request)
        said = runner_calls.Finish(
            fields.text("result", 20),
            fields.optional_text("message", 4096),
            fields.integer("logChunks", minimum=0),
            _objects(fields.array("artifacts"), "artifacts"),
            log_tail=_base64(fields, "logTail", runner_calls.MAX_LOG_CHUNK_BYTES),
            log_tail_sent=fields.boolean("logTailSent", default=True),
        )
        runner_calls.finish(runner.job, said, build=runner.build)

    return _runner_call_reading(request, jobId, view, project=False)
