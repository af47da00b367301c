"""/api/build-agents: register, list and delete the account's build agents; and what a build agent calls.

GET    /api/build-agents                 -> [agent]             (agentId, name, images, lastContact, connected)
POST   /api/build-agents {"name", "images": [...], "pullRequests"} -> agent with its "key", shown this once
DELETE /api/build-agents/{agentId}       -> 204: its key stops working

Build agents call, with their key (``Authorization: Bearer <key>``):
POST /api/agent/builds/next {"sandboxed": true} -> 200 {"apiUrl", "jobId", "token"}: a job's ticket; 204 when none
     waits (an agent without a sandbox takes no pull request's job: there, a job could read the agent's key)
POST /api/agent/builds/busy  -> 204: still running a job (it stays listed as connected)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice import Blueprint, Response

from chalicelib.api.http import ApiBlueprint, Call, check_parameters, error_response, json_body, respond
from chalicelib.core.build_agents import BuildAgent
from chalicelib.domain import build_agents
from chalicelib.domain.permissions import Permission
from chalicelib.errors import ConveyorError
from chalicelib.wire.build_agents import agent_json, new_agent_json, parse_registration, ticket_json
from chalicelib.wire.fields import Fields, path_id

api = ApiBlueprint(__name__)
blueprint = Blueprint(__name__)  # the agents' own calls, outside the users' API and its keys
_ANY = ["*/*"]


@api.route("/build-agents")
def list_build_agents(call: Call) -> list[dict[str, Any]]:
    return [agent_json(agent) for agent in build_agents.list_agents(call.caller)]


@api.route("/build-agents", "POST", Permission.UPDATE_ACCOUNT_DETAILS)
def register_build_agent(call: Call) -> dict[str, Any]:
    name, images, pull_requests = parse_registration(call.json())
    return new_agent_json(build_agents.register(call.caller, name, images, pull_requests))


@api.route("/build-agents/{agentId}", "DELETE", Permission.UPDATE_ACCOUNT_DETAILS)
def delete_build_agent(call: Call, agentId: str) -> None:
    build_agents.delete(call.caller, path_id(agentId, "Build agent"))


def _agent_call(view: Callable[[BuildAgent], Any]) -> Response:
    request = blueprint.current_request
    try:
        check_parameters(request, {})
        return respond(view(build_agents.agent_of(request.headers.get("authorization"))))
    except ConveyorError as error:
        return error_response(error)


@blueprint.route("/api/agent/builds/next", methods=["POST"], content_types=_ANY)
def next_build_job() -> Response:
    def view(agent: BuildAgent) -> Any:
        sandboxed = Fields(json_body(blueprint.current_request, required=False)).boolean("sandboxed", default=True)
        ticket = build_agents.next_job(agent, sandboxed)
        return None if ticket is None else ticket_json(ticket)

    return _agent_call(view)


@blueprint.route("/api/agent/builds/busy", methods=["POST"], content_types=_ANY)
def build_agent_busy() -> Response:
    return _agent_call(build_agents.busy)
