"""/api/health: answers without a key, for load balancers and the local stack's readiness check."""

from __future__ import annotations

from chalice import Blueprint

blueprint = Blueprint(__name__)


@blueprint.route("/api/health", methods=["GET"])
def health() -> dict[str, str]:
    return {"status": "ok"}
