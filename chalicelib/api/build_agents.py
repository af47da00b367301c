"""/api/build-agents: register, list and delete the account's build agents; and what a build agent calls.

GET    /api/build-agents                 -> [agent]             (agentId, name, images, lastContact, connected)
POST   /api/build-agents {"name", "images": [...], "pullRequests"} -> agent with its "key", shown this once
DELETE /api/build-agents/{agentId}       -> 204: its key stops working

Build agents call, with their key (``Authorization: Bearer <key>``):
POST /api/agent/builds/next {"sandboxed": true} -> 200 {"apiUrl", "jobId", "token"}: a job's ticket; 204 when none
     waits (an agent without a sandbox takes no pull request's job: there, a job could read the agent's key; a
     Windows agent, {"sandboxed": false, "platform": "windows"}, has none to offer, and takes them where its
     registration says "pullRequests": true)
POST /api/agent/builds/busy  -> 204: still running a job (it stays listed as connected)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.calls import Call
from chalicelib.api.http import check_parameters, error_response, json_body, respond
from chalicelib.core.build_agents import BuildAgent
from chalicelib.domain.execution import build_agents
from chalicelib.errors import ConveyorError
from chalicelib.wire.build_agents import agent_json, new_agent_json, parse_registration, ticket_json
from chalicelib.wire.fields import Fields, path_id


def list_build_agents(call: Call) -> list[dict[str, Any]]:
    return [agent_json(agent) for agent in build_agents.list_agents(call.caller)]


def register_build_agent(call: Call) -> dict[str, Any]:
    name, images, pull_requests = parse_registration(call.json())
    return new_agent_json(build_agents.register(call.caller, name, images, pull_requests))


def delete_build_agent(call: Call, agentId: str) -> None:
    build_agents.delete(call.caller, path_id(agentId, "Build agent"))


def _agent_call(request: Request, view: Callable[[BuildAgent], Any]) -> Response:
    try:
        check_parameters(request, {})
        return respond(view(build_agents.agent_of(request.headers.get("authorization"))))
    except ConveyorError as error:
        return error_response(error)


def next_build_job(request: Request) -> Response:
    def view(agent: BuildAgent) -> Any:
        fields = Fields(json_body(request, required=False))
        sandboxed = fields.boolean("sandboxed", default=False)  # an agent that does not say has none: fail closed
        windows = (fields.optional_text("platform", 20) or "").lower() == "windows"
        ticket = build_agents.next_job(agent, sandboxed, windows)
        return None if ticket is None else ticket_json(ticket)

    return _agent_call(request, view)


def build_agent_busy(request: Request) -> Response:
    return _agent_call(request, build_agents.busy)
