"""The OpenAPI document: an operation for every route and a route for every operation, a valid document served
without a key, and real responses that match what it documents (status, media type, schema)."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import jsonschema
import pytest
from chalice.test import Client
from openapi_spec_validator import validate

from chalicelib.api.http import ACCOUNT_PREFIX
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject
from tests.deployments import add_environment, deploy, wait_for_deployment
from tests.support import Account, Caller, Reply, add_project, member_of_role, project_path, unique

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
API_ONLY = [{"url": "/api"}]  # the path-level servers of the paths not served under the account prefix
PROJECT = "/projects/{accountName}/{projectSlug}"
ENVIRONMENT = "/environments/{deploymentEnvironmentId}"
PROJECT_VARIABLES = PROJECT + "/settings/environment-variables"


@cache
def document() -> dict[str, Any]:
    from chalicelib.api.openapi import DOCUMENT

    loaded: dict[str, Any] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return loaded


def served_routes() -> dict[tuple[str, str], str]:
    """Every (method, full path) the app serves, with the name of its view, but the dashboard's page and files and
    the accounts' OpenID Connect issuers: they are no part of the API (its document's servers are /api), and
    test_dashboard.py and test_id_tokens.py cover them."""
    from app import app
    from chalicelib.api.dashboard import ROUTES as DASHBOARD_ROUTES
    from chalicelib.api.oidc import ROUTES as ISSUER_ROUTES

    return {
        (method.lower(), path): entry.view_name
        for path, entry_of in app.routes.items()
        for method, entry in entry_of.items()
        if (method, path) not in DASHBOARD_ROUTES | ISSUER_ROUTES
    }


def test_the_only_routes_outside_api_are_the_dashboards_and_the_issuers() -> None:
    from app import app
    from chalicelib.api.dashboard import ROUTES as DASHBOARD_ROUTES
    from chalicelib.api.oidc import ROUTES as ISSUER_ROUTES

    outside = {(method, path) for path, entry_of in app.routes.items() for method in entry_of}
    outside = {(method, path) for method, path in outside if not path.startswith("/api/") and path != "/api"}
    assert outside == DASHBOARD_ROUTES | ISSUER_ROUTES


def documented_routes() -> dict[tuple[str, str], str]:
    """The (method, full path) routes the document's operations stand for, with their operationIds: a path is
    served at both servers, unless its own ``servers`` say ``/api`` only."""
    routes = {}
    for path, item in document()["paths"].items():
        prefixes = ["/api"] if "servers" in item else ["/api", ACCOUNT_PREFIX]
        for method in (key for key in item if key in METHODS):
            for prefix in prefixes:
                routes[(method, prefix + path)] = item[method]["operationId"]
    return routes


def test_every_route_has_a_documented_operation_and_every_operation_a_route() -> None:
    served, documented = served_routes(), documented_routes()
    undocumented = sorted(f"{method.upper()} {path}" for method, path in served.keys() - documented.keys())
    unserved = sorted(f"{method.upper()} {path}" for method, path in documented.keys() - served.keys())
    assert not undocumented, f"routes without a documented operation: {undocumented}"
    assert not unserved, f"documented operations without a route: {unserved}"


def test_each_operation_id_is_its_view_function_name() -> None:
    served, documented = served_routes(), documented_routes()
    wrong = {
        f"{method.upper()} {path}": (documented[method, path], view)
        for (method, path), view in served.items()
        if documented.get((method, path), view) != view
    }
    assert not wrong, f"operationId differs from the view's name (documented, view): {wrong}"


def test_paths_served_only_at_api_say_so_with_their_servers() -> None:
    overridden = {path: item["servers"] for path, item in document()["paths"].items() if "servers" in item}
    assert all(servers == API_ONLY for servers in overridden.values()), overridden
    assert set(overridden) >= {"/health", "/openapi.json"}


def test_the_document_is_valid_openapi() -> None:
    validate(document())


def test_every_operation_is_summarised_tagged_secured_and_answers_errors_in_the_error_shape() -> None:
    operations = [item[method] for item in document()["paths"].values() for method in item if method in METHODS]
    assert len({operation["operationId"] for operation in operations}) == len(operations)
    for operation in operations:
        assert operation.get("summary") and operation.get("tags"), operation["operationId"]
        assert "security" in operation, operation["operationId"]
        for status, response in operation["responses"].items():
            if int(status) >= 400:
                assert response["$ref"].startswith("#/components/responses/"), (operation["operationId"], status)


def test_the_document_is_served_without_a_key(client: Client) -> None:
    response = client.http.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert json.loads(response.body) == document()


# Real responses against the documented ones.


def _nullable_as_json_schema(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema says it (as schemathesis reads it)."""
    if isinstance(schema, list):
        return [_nullable_as_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: _nullable_as_json_schema(value) for key, value in schema.items()}
    if converted.pop("nullable", False):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@cache
def _components() -> dict[str, Any]:
    components: dict[str, Any] = _nullable_as_json_schema(copy.deepcopy(document()["components"]))
    return components


def assert_conforms(reply: Reply, operation: str) -> None:
    """The reply's status is documented for ``operation`` (``"GET /users/{userId}"``), and its body has the
    documented media type and schema."""
    method, path = operation.split(" ")
    response = document()["paths"][path][method.lower()]["responses"].get(str(reply.status))
    assert response is not None, f"{operation} answered an undocumented {reply.status}: {reply.body!r}"
    if "$ref" in response:
        response = document()["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    content = response.get("content")
    if not content:
        assert reply.body == b"", f"{operation} {reply.status} has a body: {reply.body!r}"
        return
    # Without a Content-Type of its own, a response goes out as application/json (API Gateway and chalice local).
    media_type = reply.headers.get("Content-Type", "application/json").split(";")[0].strip()
    assert media_type in content, f"{operation} {reply.status} answered {media_type}"
    if media_type == "application/json":
        schema = {"allOf": [_nullable_as_json_schema(content[media_type]["schema"])], "components": _components()}
        jsonschema.Draft7Validator(schema).validate(reply.json)


def test_team_responses_match_their_documented_shapes(account: Account) -> None:
    api = account.api
    users = api.get("/users")
    assert_conforms(users, "GET /users")
    assert_conforms(api.get(f"/users/{users.json[0]['userId']}"), "GET /users/{userId}")
    roles = api.get("/roles")
    assert_conforms(roles, "GET /roles")
    assert_conforms(api.get(f"/users/{roles.json[0]['roleId']}"), "GET /users/{userId}")  # a role's details
    added = api.post("/roles", {"name": unique("role")})
    assert_conforms(added, "POST /roles")
    assert_conforms(api.put("/roles", added.json), "PUT /roles")
    assert_conforms(api.get(f"/roles/{added.json['roleId']}"), "GET /roles/{roleId}")
    assert_conforms(api.post("/roles", {"name": added.json["name"]}), "POST /roles")  # 409
    email = f"{unique('collaborator')}@team.example"
    assert_conforms(api.post("/collaborators", {"email": email, "roleId": added.json["roleId"]}), "POST /collaborators")
    collaborators = api.get("/collaborators")
    assert_conforms(collaborators, "GET /collaborators")
    assert_conforms(api.get(f"/collaborators/{collaborators.json[0]['userId']}"), "GET /collaborators/{userId}")
    assert_conforms(api.delete(f"/roles/{added.json['roleId']}"), "DELETE /roles/{roleId}")  # 409: in use


def test_project_and_environment_responses_match_their_documented_shapes(account: Account) -> None:
    api = account.api
    path = project_path(add_project(account))
    assert_conforms(api.get("/projects"), "GET /projects")
    assert_conforms(api.get(path), f"GET {PROJECT}")
    assert_conforms(api.get(f"{path}/settings"), f"GET {PROJECT}/settings")
    assert_conforms(api.get(f"{path}/settings/yaml"), f"GET {PROJECT}/settings/yaml")
    variables = [
        {"name": "PLAIN", "value": {"isEncrypted": False, "value": "1"}},
        {"name": "SECRET", "value": {"isEncrypted": True, "value": "s3cret"}},
        {"name": "EMPTY", "value": {"isEncrypted": False}},
    ]
    assert_conforms(api.put(f"{path}/settings/environment-variables", variables), f"PUT {PROJECT_VARIABLES}")
    assert_conforms(api.get(f"{path}/settings/environment-variables"), f"GET {PROJECT_VARIABLES}")
    assert_conforms(api.get(f"{path}/history?recordsNumber=10"), f"GET {PROJECT}/history")
    assert_conforms(api.get(f"{path}/history"), f"GET {PROJECT}/history")  # 400: recordsNumber is required
    assert_conforms(api.get(f"{path}/deployments"), f"GET {PROJECT}/deployments")
    environment = add_environment(account, "FTP", {"host": "ftp.example", "password": "pw!"}, secure={"password"})
    environment_path = f"/environments/{environment['deploymentEnvironmentId']}"
    assert_conforms(api.get("/environments"), "GET /environments")
    assert_conforms(api.get(f"{environment_path}/settings"), f"GET {ENVIRONMENT}/settings")
    assert_conforms(api.put("/environments", {**environment, "name": unique("env")}), "PUT /environments")
    assert_conforms(api.get(f"{environment_path}/deployments"), f"GET {ENVIRONMENT}/deployments")


def test_error_responses_match_the_documented_error_shape(account: Account, client: Client) -> None:
    api = account.api
    assert_conforms(Caller(client, None).get("/roles"), "GET /roles")  # 401
    assert_conforms(Caller(client, "not-a-key").get("/roles"), "GET /roles")  # 401
    assert_conforms(api.get("/users/999999999"), "GET /users/{userId}")  # 404
    assert_conforms(api.post("/users", {"fullName": "Ann"}), "POST /users")  # 400 with modelState
    assert_conforms(api.post("/users", raw=b"{not json"), "POST /users")  # 400
    assert_conforms(member_of_role(account, "User").post("/roles", {"name": unique("role")}), "POST /roles")  # 403
    assert_conforms(api.get(f"/projects/{account.name}/nothing-here"), f"GET {PROJECT}")  # 404
    assert_conforms(api.get("/buildjobs/nothing/log"), "GET /buildjobs/{jobId}/log")  # 404
    assert_conforms(Caller(client, None).post("/agent/jobs/next"), "POST /agent/jobs/next")  # 401
    assert_conforms(Caller(client, None).get("/health", headers={"Content-Type": "text/plain"}), "GET /health")  # 415


@pytest.mark.parametrize("prefix", ["/api", "/api/account/{name}"])
def test_both_servers_answer_the_documented_paths(account: Account, client: Client, prefix: str) -> None:
    caller = Caller(client, account.key, prefix.format(name=account.name))
    assert_conforms(caller.get("/roles"), "GET /roles")
    assert_conforms(caller.get("/projects"), "GET /projects")


def test_build_deployment_and_agent_responses_match_their_documented_shapes(
    built: tuple[BuildProject, dict[str, Any]], client: Client, pump: SqsPump
) -> None:
    project, build = built
    api, path = project.account.api, project.path
    assert_conforms(api.get("/projects"), "GET /projects")  # with its last build
    last = api.get(path)
    assert_conforms(last, f"GET {PROJECT}")
    assert_conforms(api.get(f"{path}/branch/{build['branch']}"), f"GET {PROJECT}/branch/{{buildBranch}}")
    assert_conforms(api.get(f"{path}/build/{build['version']}"), f"GET {PROJECT}/build/{{buildVersion}}")
    assert_conforms(api.get(f"{path}/history?recordsNumber=5"), f"GET {PROJECT}/history")
    job_path = f"/buildjobs/{last.json['build']['jobs'][0]['jobId']}"
    assert_conforms(api.get(f"{job_path}/log"), "GET /buildjobs/{jobId}/log")
    assert_conforms(api.get(f"{job_path}/artifacts"), "GET /buildjobs/{jobId}/artifacts")
    assert_conforms(api.get(f"{job_path}/artifacts/out/app.txt"), "GET /buildjobs/{jobId}/artifacts/{part1}/{part2}")
    assert_conforms(api.put("/builds", {"buildId": build["buildId"], "reRunIncomplete": True}), "PUT /builds")  # 409
    environment = add_environment(project.account, "Agent", {"agents_timeout": "60"})
    started = deploy(project, environment, build["version"])
    assert_conforms(started, "POST /deployments")
    agent = Caller(client, environment["environmentAccessKey"])
    taken = agent.post("/agent/jobs/next", {"name": "web-01"})
    assert_conforms(taken, "POST /agent/jobs/next")
    agent_job = f"/agent/jobs/{taken.json['jobId']}"
    assert_conforms(agent.post(f"{agent_job}/heartbeat"), "POST /agent/jobs/{jobId}/heartbeat")
    assert_conforms(agent.post(f"{agent_job}/log", {"lines": ["deployed"]}), "POST /agent/jobs/{jobId}/log")
    assert_conforms(agent.post(f"{agent_job}/result", {"success": True}), "POST /agent/jobs/{jobId}/result")
    assert_conforms(agent.post(f"{agent_job}/heartbeat"), "POST /agent/jobs/{jobId}/heartbeat")  # 409
    assert_conforms(agent.post("/agent/jobs/next", {"name": "web-01"}), "POST /agent/jobs/next")  # 204
    wait_for_deployment(project.account, started.json["deploymentId"])
    deployment_path = f"/deployments/{started.json['deploymentId']}"
    assert_conforms(api.get(deployment_path), "GET /deployments/{deploymentId}")
    assert_conforms(api.get(f"{path}/deployments"), f"GET {PROJECT}/deployments")
    environment_path = f"/environments/{environment['deploymentEnvironmentId']}"
    assert_conforms(api.get(f"{environment_path}/deployments"), f"GET {ENVIRONMENT}/deployments")
    started_build = api.post("/builds", {"accountName": project.account.name, "projectSlug": project.project["slug"]})
    assert_conforms(started_build, "POST /builds")
    assert_conforms(api.delete(f"/builds/{build['buildId']}"), "DELETE /builds/{buildId}")
    assert_conforms(api.get(deployment_path), "GET /deployments/{deploymentId}")  # its build deleted: null
