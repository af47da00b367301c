"""POST /api/{github,gitlab,bitbucket,git}/webhook?id={webhookId}: repository webhooks that start builds.

No API key: the id names the project, and the project's webhook secret (when set) proves the sender. The answer
is the build started, or ``{"message"}`` saying why none was; either way 200, so providers record a success.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response, json_body, raw_body, respond
from chalicelib.domain.triggers import webhooks
from chalicelib.errors import ConveyorError, Invalid
from chalicelib.shapes.builds import build_json


def receive(request: Request, provider: str) -> Response:
    """A delivery of ``provider``'s webhook (routes.py: one route per provider)."""
    try:
        check_parameters(request, {})
        raw = raw_body(request)
        body = raw.encode() if isinstance(raw, str) else raw
        query: dict[str, str] = dict(request.query_params or {})
        delivery = webhooks.Delivery(provider, query.get("id", ""), request.headers, body)
        project = webhooks.find_hook_project(delivery.webhook_id)
        webhooks.authenticate(project, delivery)
        outcome = webhooks.receive(project, delivery, _payload(request, body))
    except ConveyorError as error:
        return error_response(error)
    if outcome.build is None:
        return respond({"message": outcome.message})
    return respond(build_json(outcome.build))


def _payload(request: Request, body: bytes) -> Any:
    """The JSON body; GitHub's form content type sends it as the ``payload`` field."""
    if "form-urlencoded" in request.headers.get("content-type", ""):
        fields = parse_qs(body.decode("utf-8", errors="replace"))
        try:
            return json.loads(fields.get("payload", [""])[0])
        except ValueError as error:
            raise Invalid(f"The webhook's payload field is not valid JSON: {error}") from error
    return json_body(request)
