"""/api/health answers without a key, for load balancers and the local stack's readiness check: no IO."""

from __future__ import annotations

from chalicelib.api.health import health
from chalicelib.api.routes import ROUTES


def test_health_is_served_without_a_key_and_says_the_service_is_up() -> None:
    (route,) = [route for route in ROUTES if route.path == "/api/health"]

    assert (route.method, route.view) == ("GET", "health.health")
    assert health(None) == {"status": "ok"}  # type: ignore[arg-type]  # the request is not read
