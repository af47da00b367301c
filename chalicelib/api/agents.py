"""/api/agent: what deployment agents call, authenticated by their environment's access key.

POST /api/agent/jobs/next           {"name": "web-01"}                 -> 200 job, or 204 when none waits
POST /api/agent/jobs/{jobId}/heartbeat                                  -> {"status": "running" | "cancelling"}
POST /api/agent/jobs/{jobId}/log    {"lines": ["...", ...]}            -> 204
POST /api/agent/jobs/{jobId}/result {"success": true, "message": "..."} -> 204
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response, json_body, respond
from chalicelib.core.environments import Environment
from chalicelib.domain.deployments import deployment_agents
from chalicelib.domain.deployments.deployment_agents import MAX_MESSAGE_LENGTH
from chalicelib.errors import ConveyorError, Invalid
from chalicelib.wire.deployments import agent_job_json
from chalicelib.wire.fields import Fields


def _agent_call(request: Request, view: Callable[[Environment, Fields], Any], **params: str) -> Response:
    try:
        check_parameters(request, dict(params))
        environment = deployment_agents.agent_environment(request.headers.get("authorization"))
        return respond(view(environment, Fields(json_body(request, required=False)), **params))
    except ConveyorError as error:
        return error_response(error)


def next_job(request: Request) -> Response:
    def view(environment: Environment, fields: Fields) -> Any:
        job = deployment_agents.next_job(
            environment, (fields.optional_text("name") or "agent").strip()[:100] or "agent"
        )
        return None if job is None else agent_job_json(job)

    return _agent_call(request, view)


def heartbeat(request: Request, jobId: str) -> Response:
    return _agent_call(request, lambda environment, _: {"status": deployment_agents.heartbeat(environment, jobId)})


def append_log(request: Request, jobId: str) -> Response:
    def view(environment: Environment, fields: Fields) -> None:
        lines = fields.array("lines")
        if not all(isinstance(line, str) for line in lines):
            raise Invalid("lines must be an array of strings.")
        deployment_agents.append_log(environment, jobId, lines)

    return _agent_call(request, view)


def finish(request: Request, jobId: str) -> Response:
    def view(environment: Environment, fields: Fields) -> None:
        message = fields.optional_text("message", MAX_MESSAGE_LENGTH)
        deployment_agents.finish(environment, jobId, fields.boolean("success"), message)

    return _agent_call(request, view)
