"""Every endpoint, by its URL: the view that answers it, the permission it needs, who may call it without a key.

app.py serves these routes, and imports nothing of their views: a view is named here as ``module.function`` of
chalicelib/api/ and imported on its route's first call. So a function's cold start pays for Chalice and this table,
and its first request for what that request needs (docs/architecture.md, "What a cold start loads").

Two kinds of route:

- ``ApiRoute``: served at ``/api{path}`` and under the account prefix (``/api/account/{prefixAccountName}{path}``).
  Its caller is authenticated in one place (calls.py: an API key or the session cookie, or, where the route names a
  ``visitor``, no key for a public project's reads), then must hold ``permission``; its view takes that ``Call`` and
  the path's parameters.
- ``Route``: served at its path as it is. Its view takes the request and the path's parameters, and authenticates
  its caller its own way (an agent's key, a job's token, a webhook's secret) or needs none.

A route's name (the view's, unless it says otherwise) is its operationId in the API's document (openapi.json).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from chalice import Chalice
from chalice.app import Request

from chalicelib.api.http import ACCOUNT_PREFIX, Visitor
from chalicelib.core.reprs import FieldsRepr
from chalicelib.core.webhooks import WEBHOOK_PROVIDERS
from chalicelib.domain.team.permissions import Permission

ANY = ("*/*",)  # the views parse bodies themselves, whatever Content-Type a client sends
JSON = ("application/json",)  # Chalice's default: a request whose body is of another type is a 415
ARTIFACT_DEPTH = 4  # a file name may hold "/" unencoded: routes for up to this many segments
PROJECT = "/projects/{accountName}/{projectSlug}"
RUNNER = "/api/runner/jobs/{jobId}"
ISSUER = "/oidc/{accountName}"  # an account's OpenID Connect issuer (domain/job_identity/id_tokens.py)


@dataclass(frozen=True, repr=False)
class Route(FieldsRepr):
    """A route served at its path as it is, by ``view(request, **path_params, **arguments)``."""

    method: str
    path: str
    view: str  # module.function of chalicelib/api/
    name: str = ""  # the route's name, when not its view's
    content_types: tuple[str, ...] = ANY
    arguments: tuple[tuple[str, str], ...] = ()  # what the view is given besides the path's parameters


@dataclass(frozen=True, repr=False)
class ApiRoute(FieldsRepr):
    """An API route, at /api and under the account prefix, served by ``view(call, **path_params)``."""

    method: str
    path: str
    view: str  # module.function of chalicelib/api/
    permission: Permission | None = None
    visitor: Visitor | None = None
    name: str = ""  # the route's name, when not its view's


def _parts(depth: int) -> str:
    return "/".join(f"{{part{index}}}" for index in range(1, depth + 1))


ROUTES: tuple[Route, ...] = (
    # health.py, openapi.py: no key
    Route("GET", "/api/health", "health.health", content_types=JSON),
    Route("GET", "/api/openapi.json", "openapi.openapi_document"),
    # agents.py: deployment agents, with their environment's access key
    Route("POST", "/api/agent/jobs/next", "agents.next_job"),
    Route("POST", "/api/agent/jobs/{jobId}/heartbeat", "agents.heartbeat"),
    Route("POST", "/api/agent/jobs/{jobId}/log", "agents.append_log"),
    Route("POST", "/api/agent/jobs/{jobId}/result", "agents.finish"),
    # build_agents.py: build agents, with their own key
    Route("POST", "/api/agent/builds/next", "build_agents.next_build_job"),
    Route("POST", "/api/agent/builds/busy", "build_agents.build_agent_busy"),
    # runner.py: the job protocol, with the job's token
    Route("GET", RUNNER, "runner.spec"),
    Route("GET", RUNNER + "/runner", "runner.runner_package"),
    Route("POST", RUNNER + "/clone-credentials", "runner.clone_credentials"),
    Route("POST", RUNNER + "/heartbeat", "runner.runner_heartbeat"),
    Route("PUT", RUNNER + "/log/{index}", "runner.put_log_chunk"),
    Route("POST", RUNNER + "/artifacts", "runner.artifact_upload"),
    Route("POST", RUNNER + "/cache/entries", "runner.cache_entries"),
    Route("POST", RUNNER + "/cache/uploads", "runner.cache_upload"),
    Route("POST", RUNNER + "/cache/prune", "runner.cache_prune"),
    Route("POST", RUNNER + "/messages", "runner.add_messages"),
    Route("POST", RUNNER + "/tests", "runner.add_tests"),
    Route("PUT", RUNNER + "/tests", "runner.update_tests"),
    Route("PUT", RUNNER + "/build", "runner.update_build"),
    Route("POST", RUNNER + "/quarantine", "runner.quarantine"),
    Route("POST", RUNNER + "/finish", "runner.runner_finish"),
    # oidc.py: a job's ID token, with the request token derived from its job token; each account's issuer, no key
    Route("GET", RUNNER + "/id-token", "oidc.job_id_token"),
    Route("GET", ISSUER + "/.well-known/openid-configuration", "oidc.openid_configuration"),
    Route("GET", ISSUER + "/.well-known/jwks", "oidc.issuer_jwks"),
    # result_uploads.py: a test results file for a running job, with its job token or a key that may run its builds
    # (at /api and, for user-level keys, under the account prefix, as an API route is)
    *(
        Route("POST", prefix + "/testresults/{resultsFormat}/{jobId}", "result_uploads.upload_test_results")
        for prefix in ("/api", ACCOUNT_PREFIX)
    ),
    # webhooks.py: repositories' webhooks, with the project's webhook id (and secret)
    *(
        Route(
            "POST",
            f"/api/{provider}/webhook",
            "webhooks.receive",
            name=f"receive_{provider}_webhook",
            arguments=(("provider", provider),),
        )
        for provider in WEBHOOK_PROVIDERS
    ),
    # badges.py: status badges, with the badge id (or a public repository's name)
    Route("GET", "/api/projects/status/{badgeId}", "badges.get_status_badge"),
    Route("GET", "/api/projects/status/{badgeId}/branch/{buildBranch}", "badges.get_branch_status_badge"),
    Route(
        "GET", "/api/projects/status/{badgeId}/{repositoryOwner}/{repositoryName}", "badges.get_repository_status_badge"
    ),
    # sessions.py: the dashboard's sign-in and sign-out
    Route("POST", "/api/session", "sessions.sign_in"),
    Route("DELETE", "/api/session", "sessions.sign_out"),
    # dashboard.py: the dashboard's page and files, no key
    Route("GET", "/", "dashboard.dashboard_page", content_types=JSON),
    Route("GET", "/dashboard/{asset}", "dashboard.dashboard_asset", content_types=JSON),
)

API_ROUTES: tuple[ApiRoute, ...] = (
    # users.py
    ApiRoute("GET", "/users", "users.list_users"),
    ApiRoute("GET", "/users/{userId}", "users.get_user_or_role"),
    ApiRoute("POST", "/users", "users.add_user", Permission.ADD_USER),
    ApiRoute("PUT", "/users", "users.update_user", Permission.UPDATE_USER_DETAILS),
    ApiRoute("DELETE", "/users/{userId}", "users.delete_user", Permission.DELETE_USER),
    # collaborators.py
    ApiRoute("GET", "/collaborators", "collaborators.list_collaborators"),
    ApiRoute("GET", "/collaborators/{userId}", "collaborators.get_collaborator"),
    ApiRoute("POST", "/collaborators", "collaborators.add_collaborator", Permission.ADD_USER),
    ApiRoute("PUT", "/collaborators", "collaborators.update_collaborator", Permission.UPDATE_USER_DETAILS),
    ApiRoute("DELETE", "/collaborators/{userId}", "collaborators.delete_collaborator", Permission.DELETE_USER),
    # roles.py
    ApiRoute("GET", "/roles", "roles.list_roles"),
    ApiRoute("GET", "/roles/{roleId}", "roles.get_role"),
    ApiRoute("POST", "/roles", "roles.add_role", Permission.ADD_ROLE),
    ApiRoute("PUT", "/roles", "roles.update_role", Permission.UPDATE_ROLE_DETAILS),
    ApiRoute("DELETE", "/roles/{roleId}", "roles.delete_role", Permission.DELETE_ROLE),
    # project_reads.py, projects.py
    ApiRoute("GET", "/projects", "project_reads.list_projects"),
    ApiRoute("POST", "/projects", "projects.add_project", Permission.MANAGE_PROJECTS),
    ApiRoute("PUT", "/projects", "projects.update_project", Permission.UPDATE_PROJECT_SETTINGS),
    ApiRoute("DELETE", PROJECT, "projects.delete_project", Permission.MANAGE_PROJECTS),
    ApiRoute("GET", PROJECT + "/settings", "projects.get_settings"),
    ApiRoute("GET", PROJECT + "/settings/yaml", "projects.get_settings_yaml"),
    ApiRoute("PUT", PROJECT + "/settings/yaml", "projects.update_settings_yaml", Permission.UPDATE_PROJECT_SETTINGS),
    ApiRoute("GET", PROJECT + "/settings/environment-variables", "projects.get_environment_variables"),
    ApiRoute(
        "PUT",
        PROJECT + "/settings/environment-variables",
        "projects.update_environment_variables",
        Permission.UPDATE_PROJECT_SETTINGS,
    ),
    ApiRoute(
        "PUT", PROJECT + "/settings/build-number", "projects.update_build_number", Permission.UPDATE_PROJECT_SETTINGS
    ),
    ApiRoute("DELETE", PROJECT + "/buildcache", "projects.delete_build_cache", Permission.UPDATE_PROJECT_SETTINGS),
    ApiRoute("GET", PROJECT, "project_reads.get_project_last_build", visitor=Visitor.PROJECT),
    ApiRoute(
        "GET", PROJECT + "/branch/{buildBranch}", "project_reads.get_project_branch_build", visitor=Visitor.PROJECT
    ),
    ApiRoute(
        "GET", PROJECT + "/build/{buildVersion}", "project_reads.get_project_build_by_version", visitor=Visitor.PROJECT
    ),
    ApiRoute("GET", PROJECT + "/history", "project_reads.get_project_history", visitor=Visitor.PROJECT),
    # tests_history.py: a project's tests, one test's runs, the quarantine (Conveyor's extension)
    ApiRoute("GET", PROJECT + "/tests", "tests_history.list_project_tests"),
    ApiRoute("GET", PROJECT + "/tests/{testId}/history", "tests_history.get_test_history"),
    ApiRoute("GET", PROJECT + "/tests/quarantine", "tests_history.get_test_quarantine"),
    ApiRoute(
        "PUT", PROJECT + "/tests/quarantine", "tests_history.update_test_quarantine", Permission.UPDATE_PROJECT_SETTINGS
    ),
    ApiRoute(
        "DELETE",
        PROJECT + "/tests/quarantine",
        "tests_history.clear_test_quarantine",
        Permission.UPDATE_PROJECT_SETTINGS,
    ),
    ApiRoute(
        "DELETE",
        PROJECT + "/tests/quarantine/{testId}",
        "tests_history.release_quarantined_test",
        Permission.UPDATE_PROJECT_SETTINGS,
    ),
    # builds.py
    ApiRoute("POST", "/builds", "builds.start_build", Permission.RUN_PROJECT_BUILD),
    ApiRoute("PUT", "/builds", "builds.rerun_build", Permission.RUN_PROJECT_BUILD),
    ApiRoute(
        "DELETE",
        "/builds/{accountName}/{projectSlug}/{buildVersion}",
        "builds.cancel_build",
        Permission.RUN_PROJECT_BUILD,
    ),
    ApiRoute("DELETE", "/builds/{buildId}", "builds.delete_build", Permission.DELETE_PROJECT_BUILDS),
    ApiRoute("GET", "/buildjobs/{jobId}/log", "builds.get_job_log", visitor=Visitor.JOB),
    ApiRoute("GET", "/buildjobs/{jobId}/artifacts", "builds.list_job_artifacts", visitor=Visitor.JOB),
    ApiRoute("GET", "/buildjobs/{jobId}/messages", "builds.list_job_messages"),
    ApiRoute("GET", "/buildjobs/{jobId}/tests", "builds.list_job_tests"),
    *(
        route
        for depth in range(1, ARTIFACT_DEPTH + 1)
        for route in (
            ApiRoute(
                "GET",
                "/buildjobs/{jobId}/artifacts/" + _parts(depth),
                "builds.download_artifact",
                visitor=Visitor.JOB,
                name=f"download_artifact_{depth}",
            ),
            ApiRoute(
                "GET",
                PROJECT + "/artifacts/" + _parts(depth),
                "builds.download_last_artifact",
                visitor=Visitor.PROJECT,
                name=f"download_last_artifact_{depth}",
            ),
        )
    ),
    # environments.py
    ApiRoute("GET", "/environments", "environments.list_environments"),
    ApiRoute("GET", "/environments/{deploymentEnvironmentId}/settings", "environments.get_environment_settings"),
    ApiRoute("POST", "/environments", "environments.add_environment", Permission.MANAGE_ENVIRONMENTS),
    ApiRoute("PUT", "/environments", "environments.update_environment", Permission.UPDATE_ENVIRONMENT_SETTINGS),
    ApiRoute(
        "DELETE",
        "/environments/{deploymentEnvironmentId}",
        "environments.delete_environment",
        Permission.MANAGE_ENVIRONMENTS,
    ),
    # deployments.py
    ApiRoute("POST", "/deployments", "deployments.start_deployment", Permission.DEPLOY_TO_ENVIRONMENT),
    ApiRoute("PUT", "/deployments/stop", "deployments.stop_deployment", Permission.DEPLOY_TO_ENVIRONMENT),
    ApiRoute("GET", "/deployments/{deploymentId}", "deployments.get_deployment"),
    ApiRoute("GET", PROJECT + "/deployments", "deployments.get_project_deployments"),
    ApiRoute("GET", "/environments/{deploymentEnvironmentId}/deployments", "deployments.get_environment_deployments"),
    # sessions.py: who the key or the session cookie acts for
    ApiRoute("GET", "/caller", "sessions.get_caller"),
    # encrypted_values.py: a value for secure: in the account's appveyor.yml files (AppVeyor's; any member)
    ApiRoute("POST", "/account/encrypt", "encrypted_values.encrypt_value"),
    # build_agents.py: the account's build agents
    ApiRoute("GET", "/build-agents", "build_agents.list_build_agents"),
    ApiRoute("POST", "/build-agents", "build_agents.register_build_agent", Permission.UPDATE_ACCOUNT_DETAILS),
    ApiRoute("DELETE", "/build-agents/{agentId}", "build_agents.delete_build_agent", Permission.UPDATE_ACCOUNT_DETAILS),
)

# How a route answers a request, given the request and the path's parameters: a Response, or what Chalice makes one
# of (a view's dict).
Handler = Callable[[Request, dict[str, str]], Any]


def register(app: Chalice) -> None:
    """Serve every route of the tables on ``app``, each by a stub that loads its view on the first call."""
    for route in ROUTES:
        _serve(app, route.path, route, route.content_types)
    for api_route in API_ROUTES:
        for prefix in ("/api", ACCOUNT_PREFIX):
            _serve(app, prefix + api_route.path, api_route, ANY)


def _serve(app: Chalice, path: str, route: Route | ApiRoute, content_types: tuple[str, ...]) -> None:
    def stub(**params: str) -> Any:
        request = app.current_request
        assert request is not None  # Chalice sets it before it calls a route's function
        return handler_of(route)(request, params)

    name = route.name or route.view.rsplit(".", 1)[1]
    app.route(path, methods=[route.method], content_types=list(content_types), name=name)(stub)


@cache
def handler_of(route: Route | ApiRoute) -> Handler:
    """What answers ``route``: its view, imported now if it was not yet, behind the caller's authentication (with
    its own imports) for an API route."""
    module, function = route.view.rsplit(".", 1)
    view = getattr(importlib.import_module(f"chalicelib.api.{module}"), function)
    if isinstance(route, ApiRoute):
        from chalicelib.api import calls  # authenticating reads tables: the store loads with the first API request

        return partial(calls.answer, view, route.permission, route.visitor)
    arguments = dict(route.arguments)
    return lambda request, params: view(request, **params, **arguments)
