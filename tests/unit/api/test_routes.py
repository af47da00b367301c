"""The route table (chalicelib/api/routes.py): every route names a view that takes what the route gives it, and
importing the app loads none of them, nor what they need (the views load on their route's first call)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chalicelib.api.routes import API_ROUTES, ROUTES, ApiRoute, Route

ROOT = Path(__file__).resolve().parents[3]
EVERY_ROUTE: list[Route | ApiRoute] = [*ROUTES, *API_ROUTES]


def view_of(route: Route | ApiRoute) -> object:
    module, function = route.view.rsplit(".", 1)
    return getattr(importlib.import_module(f"chalicelib.api.{module}"), function, None)


@pytest.mark.parametrize("route", EVERY_ROUTE, ids=lambda route: f"{route.method} {route.path}")
def test_each_route_names_a_view_that_takes_the_request_and_the_paths_parameters(route: Route | ApiRoute) -> None:
    view = view_of(route)
    assert callable(view), f"{route.view} is not a function of chalicelib/api/"
    given = {name: "x" for name in re.findall(r"{(\w+)}", route.path)}
    if isinstance(route, Route):
        given |= dict(route.arguments)
    inspect.signature(view).bind("request or call", **given)  # a TypeError names what does not fit


def test_no_two_routes_share_a_method_and_path() -> None:
    served = [(route.method, route.path) for route in ROUTES]
    served += [(route.method, prefix + route.path) for route in API_ROUTES for prefix in ("/api", "/api/account/x")]
    assert len(served) == len(set(served))


def modules_loaded_by(program: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``program`` with the prod stage's settings."""
    stage = json.loads((ROOT / ".chalice" / "config.json").read_text())["stages"]["prod"]["environment_variables"]
    child = subprocess.run(
        [sys.executable, "-c", program + "\nprint('\\n'.join(sorted(sys.modules)))"],
        env={**os.environ, **stage, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    return child.stdout.split()


def test_importing_the_app_loads_no_view_worker_store_or_aws_library() -> None:
    """What a function's cold start imports: Chalice, the route table and the settings (bench/cold_start.py times
    it)."""
    views = {"chalicelib.api." + route.view.rsplit(".", 1)[0] for route in EVERY_ROUTE}
    lazy = ("boto3", "botocore", "pynamodb", "chalicelib.store", "chalicelib.workers", "chalicelib.api.calls", *views)
    loaded = [module for module in modules_loaded_by("import sys, app") if module.startswith(lazy)]
    assert loaded == []


def test_a_projects_first_read_loads_nothing_that_changes_projects_or_runs_jobs() -> None:
    """What the first GET /api/projects/{accountName}/{projectSlug} loads (bench/cold_start.py times it): its view
    and what reads the project, its builds and its caller, not what adds a project, changes its settings or runs a
    job (the settings' views, appveyor.yml, repositories and their credentials, badges, the runner, source
    control)."""
    route = ("GET", "/projects/{accountName}/{projectSlug}")
    program = (
        "import sys, app\n"
        "from chalicelib.api.routes import API_ROUTES, handler_of\n"
        f"handler_of(next(route for route in API_ROUTES if (route.method, route.path) == {route!r}))"
    )
    writers = (
        "chalicelib.api.projects",
        "chalicelib.domain.projects.projects",
        "chalicelib.domain.projects.project_settings",
        "chalicelib.domain.projects.badges",
        "chalicelib.domain.configuration.yamlconfig",
        "chalicelib.domain.forges.repositories",
        "chalicelib.domain.forges.repository_credentials",
        "chalicelib.domain.shared.secrets",
        "chalicelib.wire.project_settings",
        "chalicelib.runner",
        "chalicelib.executors",
        "chalicelib.scm",
    )
    loaded = modules_loaded_by(program)
    assert "chalicelib.api.project_reads" in loaded
    assert [module for module in loaded if module.startswith(writers)] == []
