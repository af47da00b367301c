"""/api/health: answers without a key, for load balancers and the local stack's readiness check."""

from __future__ import annotations

from chalice.app import Request


def health(request: Request) -> dict[str, str]:
    """Always ``{"status": "ok"}``: the service is up."""
    return {"status": "ok"}
