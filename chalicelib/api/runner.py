"""/api/runner/jobs/{jobId}: the job protocol, what a build's runner calls, authenticated by its job token only.

GET  /api/runner/jobs/{jobId}                  -> the job's spec
GET  /api/runner/jobs/{jobId}/runner           -> the runner as a zip (for executors that start from an image)
POST /api/runner/jobs/{jobId}/clone-credentials -> {"username", "password"}, once per attempt (then 409)
POST /api/runner/jobs/{jobId}/heartbeat        -> {"status": "running" | "cancelling"}
PUT  /api/runner/jobs/{jobId}/log/{index}      raw bytes (a masked chunk of the log) -> 204
POST /api/runner/jobs/{jobId}/artifacts        {"fileName", "size"} -> {"url", "headers"}
POST /api/runner/jobs/{jobId}/cache/entries    {"ids": [...]} -> {"entries": {id: {...} | null}, "save": bool}
POST /api/runner/jobs/{jobId}/cache/uploads    {"id", "size", "metadata"} -> {"url", "headers"}
POST /api/runner/jobs/{jobId}/cache/prune      {"keep": [...]} -> {"deleted": n}
POST /api/runner/jobs/{jobId}/messages         {"messages": [...]} -> 204
POST|PUT /api/runner/jobs/{jobId}/tests        {"tests": [...]} -> 204
PUT  /api/runner/jobs/{jobId}/build            {"version"} -> 204
POST /api/runner/jobs/{jobId}/finish           {"result", "message", "logChunks", "artifacts"} -> 204

A token names one job: any other job id, or the job once ended, is a 401 and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice import Blueprint, Response

from chalicelib.api.http import check_parameters, error_response, json_body, respond
from chalicelib.core.jobs import Job
from chalicelib.domain import job_tokens, runner_cache, runner_jobs
from chalicelib.errors import ConveyorError, Invalid, NotFound
from chalicelib.wire.fields import Fields

blueprint = Blueprint(__name__)
_ANY = ["*/*"]
_PREFIX = "/api/runner/jobs/{jobId}"


def _runner_call(job_id: str, view: Callable[[Job], Any], **params: str) -> Response:
    request = blueprint.current_request
    try:
        check_parameters(request, {"jobId": job_id, **params})
        job = job_tokens.runner_job(job_id, request.headers.get("authorization"))
        return respond(view(job))
    except ConveyorError as error:
        return error_response(error)


def _fields() -> Fields:
    return Fields(json_body(blueprint.current_request))


def _texts(values: list[Any], name: str) -> list[str]:
    if not all(isinstance(value, str) for value in values):
        raise Invalid(f"{name} must be an array of strings.")
    return values


def _objects(values: list[Any], name: str) -> list[dict[str, Any]]:
    if not all(isinstance(value, dict) for value in values):
        raise Invalid(f"{name} must be an array of objects.")
    return values


@blueprint.route(_PREFIX, methods=["GET"], content_types=_ANY)
def spec(jobId: str) -> Response:
    return _runner_call(jobId, runner_jobs.job_spec)


@blueprint.route(f"{_PREFIX}/runner", methods=["GET"], content_types=_ANY)
def runner_package(jobId: str) -> Response:
    def view(job: Job) -> Response:
        headers: dict[str, str | list[str]] = {"Content-Type": "application/zip", "Cache-Control": "no-store"}
        return Response(body=runner_jobs.runner_package(job), status_code=200, headers=headers)

    return _runner_call(jobId, view)


@blueprint.route(f"{_PREFIX}/clone-credentials", methods=["POST"], content_types=_ANY)
def clone_credentials(jobId: str) -> Response:
    return _runner_call(jobId, runner_jobs.clone_credentials)


@blueprint.route(f"{_PREFIX}/heartbeat", methods=["POST"], content_types=_ANY)
def runner_heartbeat(jobId: str) -> Response:  # named apart from the agents' views: view names are operationIds
    request = blueprint.current_request
    try:
        check_parameters(request, {"jobId": jobId})
        return respond({"status": job_tokens.heartbeat(jobId, request.headers.get("authorization"))})
    except ConveyorError as error:
        return error_response(error)


@blueprint.route(f"{_PREFIX}/log/{{index}}", methods=["PUT"], content_types=_ANY)
def put_log_chunk(jobId: str, index: str) -> Response:
    def view(job: Job) -> None:
        if not index.isascii() or not index.isdigit():
            raise NotFound("A log chunk is named by its number.")
        body = blueprint.current_request.raw_body or b""
        runner_jobs.put_log_chunk(job, int(index), body if isinstance(body, bytes) else body.encode())

    return _runner_call(jobId, view, index=index)


@blueprint.route(f"{_PREFIX}/artifacts", methods=["POST"], content_types=_ANY)
def artifact_upload(jobId: str) -> Response:
    def view(job: Job) -> Any:
        fields = _fields()
        return runner_jobs.artifact_upload(job, fields.text("fileName", 1024), fields.integer("size", minimum=0))

    return _runner_call(jobId, view)


@blueprint.route(f"{_PREFIX}/cache/entries", methods=["POST"], content_types=_ANY)
def cache_entries(jobId: str) -> Response:
    return _runner_call(jobId, lambda job: runner_cache.cache_entries(job, _texts(_fields().array("ids"), "ids")))


@blueprint.route(f"{_PREFIX}/cache/uploads", methods=["POST"], content_types=_ANY)
def cache_upload(jobId: str) -> Response:
    def view(job: Job) -> Any:
        fields = _fields()
        metadata = fields.body.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise Invalid("metadata must be an object.")
        return runner_cache.cache_upload(job, fields.text("id", 16), fields.integer("size", minimum=0), metadata)

    return _runner_call(jobId, view)


@blueprint.route(f"{_PREFIX}/cache/prune", methods=["POST"], content_types=_ANY)
def cache_prune(jobId: str) -> Response:
    return _runner_call(
        jobId, lambda job: {"deleted": runner_cache.cache_prune(job, _texts(_fields().array("keep"), "keep"))}
    )


@blueprint.route(f"{_PREFIX}/messages", methods=["POST"], content_types=_ANY)
def add_messages(jobId: str) -> Response:
    return _runner_call(
        jobId, lambda job: runner_jobs.add_messages(job, _objects(_fields().array("messages"), "messages"))
    )


@blueprint.route(f"{_PREFIX}/tests", methods=["POST"], content_types=_ANY)
def add_tests(jobId: str) -> Response:
    return _runner_call(
        jobId, lambda job: runner_jobs.add_tests(job, _objects(_fields().array("tests"), "tests"), False)
    )


@blueprint.route(f"{_PREFIX}/tests", methods=["PUT"], content_types=_ANY)
def update_tests(jobId: str) -> Response:
    return _runner_call(
        jobId, lambda job: runner_jobs.add_tests(job, _objects(_fields().array("tests"), "tests"), True)
    )


@blueprint.route(f"{_PREFIX}/build", methods=["PUT"], content_types=_ANY)
def update_build(jobId: str) -> Response:
    return _runner_call(jobId, lambda job: runner_jobs.update_version(job, _fields().text("version", 256)))


@blueprint.route(f"{_PREFIX}/finish", methods=["POST"], content_types=_ANY)
def runner_finish(jobId: str) -> Response:
    def view(job: Job) -> None:
        fields = _fields()
        runner_jobs.finish(
            job,
            fields.text("result", 20),
            fields.optional_text("message", 4096),
            fields.integer("logChunks", minimum=0),
            _objects(fields.array("artifacts"), "artifacts"),
        )

    return _runner_call(jobId, view)
