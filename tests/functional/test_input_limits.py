"""Issue 6: input limits (docs/api.md, "Limits"). A body over the documented size, a string over its documented length
and a number out of its range are a 400 naming the field and the limit, never a 5xx, and change nothing; the exact
limit itself is still accepted. A path segment longer than any name can be names nothing: 404."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.domain.configuration import matrix
from chalicelib.domain.configuration.yamlconfig import default_configuration
from chalicelib.domain.configuration.yamlconfig.syntax import MAX_YAML_DEPTH
from chalicelib.domain.projects.project_settings import MAX_CONFIGURATION_BYTES, valid_configuration
from chalicelib.domain.shared import secrets
from chalicelib.domain.shared.validation import MAX_INTEGER, MAX_NESTING_DEPTH
from chalicelib.store import projects as project_store
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import named
from tests.gitserver import GitServer
from tests.support import Account, Reply, add_project, new_account, project_path, unique

HUGE = 10**30
MAX_ID = MAX_INTEGER  # 2**53 - 1
MAX_BUILD_NUMBER = 2**31 - 1


@dataclass
class World:
    """One account with something of every kind to change; each test leaves it as it was or adds to it."""

    account: Account
    project: BuildProject  # built from the git server: builds, deployments, history
    settings_project: dict[str, Any]  # its settings change (a long versionFormat would stop builds of the other)
    user: dict[str, Any]
    role: dict[str, Any]
    environment: dict[str, Any]
    agent_key: str

    @property
    def path(self) -> str:
        return self.project.path

    @property
    def settings_path(self) -> str:
        return project_path(self.settings_project)

    @property
    def target(self) -> dict[str, str]:
        return {"accountName": self.account.name, "projectSlug": self.project.project["slug"]}

    def user_role(self) -> int:
        return self.account.role_id("User")

    def call(self, method: str, path: str, body: Any = None) -> Reply:
        if isinstance(body, bytes):
            return self.account.api.call(method, path, raw=body, headers={"Content-Type": "text/plain"})
        return self.account.api.call(method, path, body)

    writes: list[int] = field(default_factory=lambda: [0])  # requests other than GET the client has sent
    _last: tuple[int, dict[str, Any]] | None = None

    def snapshot(self) -> dict[str, Any]:
        """Everything the account's reads show: a refused request must leave all of it as it was. Taken again only
        when a request other than a GET was sent since the last one (the module starts no builds that could change
        it meanwhile): the snapshot after one refused request is the one before the next."""
        if self._last is not None and self._last[0] == self.writes[0]:
            return self._last[1]
        shown = self._read_everything()
        self._last = (self.writes[0], shown)
        return shown

    def _read_everything(self) -> dict[str, Any]:
        paths = [
            "/users",
            "/collaborators",
            "/roles",
            "/projects",
            "/environments",
            self.path + "/settings",
            self.path + "/history?recordsNumber=100",
            self.path + "/deployments",
            self.settings_path + "/settings",
            self.settings_path + "/settings/yaml",
            self.settings_path + "/settings/environment-variables",
            f"/environments/{self.environment['deploymentEnvironmentId']}/settings",
        ]
        shown = {}
        for path in paths:
            reply = self.account.api.get(path)
            assert reply.status == 200, (path, reply.body)
            shown[path] = reply.body
        return shown


@pytest.fixture(scope="module")
def world(client: Client, git_server: GitServer) -> Iterator[World]:
    with pytest.MonkeyPatch.context() as patch:
        writes = [0]
        request = client.http.request

        def counted(method: str, *args: Any, **kwargs: Any) -> Any:
            if method.upper() != "GET":
                writes[0] += 1
            return request(method, *args, **kwargs)

        patch.setattr(client.http, "request", counted)
        yield _world(client, git_server, writes)


def _world(client: Client, git_server: GitServer, writes: list[int]) -> World:
    account = new_account(client)
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    settings_project = add_project(account)
    user = account.add_user(f"{unique('user')}@team.example")
    role = account.add_role(unique("role")[:40])
    environment = account.api.post(
        "/environments",
        {
            "name": unique("hook"),
            "provider": "Webhook",
            "settings": {"providerSettings": [named("url", "http://127.0.0.1:9/")], "environmentVariables": []},
        },
    ).json
    agents = account.api.post(
        "/environments",
        {
            "name": unique("agents"),
            "provider": "Agent",
            "settings": {"providerSettings": [], "environmentVariables": []},
        },
    ).json
    return World(account, project, settings_project, user, role, environment, agents["environmentAccessKey"], writes)


def assert_refused(world: World, method: str, path: str, body: Any, *mentions: str, status: int = 400) -> Reply:
    """The request is refused with ``status`` and a message naming each of ``mentions``; nothing changes."""
    before = world.snapshot()
    reply = world.call(method, path, body)

    assert reply.status == status, reply.body
    message = reply.json["message"]
    for mention in mentions:
        assert mention in message, message
    assert world.snapshot() == before
    return reply


def assert_accepted(reply: Reply, status: int) -> None:
    """The request got past the limit: it is answered as if no limit were near (``status``)."""
    assert reply.status == status, reply.body
    if reply.status == 400:
        assert "at most" not in reply.json["message"] and "between" not in reply.json["message"], reply.body


# Bodies


def padded(body: dict[str, Any], size: int) -> bytes:
    """``body`` as JSON of exactly ``size`` bytes, with an extra field the API ignores."""
    empty = json.dumps({**body, "pad": ""}).encode()
    return json.dumps({**body, "pad": "x" * (size - len(empty))}).encode()


WRITE_ROUTES = [
    ("POST", "/users"),
    ("PUT", "/users"),
    ("POST", "/collaborators"),
    ("PUT", "/collaborators"),
    ("POST", "/roles"),
    ("PUT", "/roles"),
    ("POST", "/projects"),
    ("PUT", "/projects"),
    ("PUT", "{project}/settings/environment-variables"),
    ("PUT", "{project}/settings/build-number"),
    ("PUT", "{project}/settings/yaml"),
    ("POST", "/builds"),
    ("PUT", "/builds"),
    ("POST", "/environments"),
    ("PUT", "/environments"),
    ("POST", "/deployments"),
    ("PUT", "/deployments/stop"),
]


@pytest.mark.parametrize(("method", "route"), WRITE_ROUTES, ids=lambda value: str(value))
def test_a_json_body_over_one_mebibyte_is_refused(world: World, method: str, route: str) -> None:
    body = padded({"name": "x"}, MAX_BODY_BYTES + 1)

    path = route.format(project=world.settings_path)

    reply = assert_refused(world, method, path, body, "request body", str(MAX_BODY_BYTES))

    assert str(MAX_BODY_BYTES + 1) in reply.json["message"]


def test_a_yaml_body_over_one_mebibyte_is_refused(world: World) -> None:
    text = b"# " + b"x" * MAX_BODY_BYTES

    assert_refused(world, "PUT", world.settings_path + "/settings/yaml", text, "request body", str(MAX_BODY_BYTES))


def test_an_agent_body_over_one_mebibyte_is_refused(world: World) -> None:
    reply = world.account.client.http.post(
        "/api/agent/jobs/next",
        headers={"Authorization": f"Bearer {world.agent_key}"},
        body=padded({"name": "web-01"}, MAX_BODY_BYTES + 1),
    )

    assert reply.status_code == 400, reply.body
    assert str(MAX_BODY_BYTES) in json.loads(reply.body)["message"]


def test_a_json_body_of_exactly_one_mebibyte_is_accepted(world: World) -> None:
    name = unique("role")[:40]
    reply = world.call("POST", "/roles", padded({"name": name}, MAX_BODY_BYTES))

    assert_accepted(reply, 200)
    assert reply.json["name"] == name


def test_a_yaml_body_of_exactly_one_mebibyte_is_accepted(world: World) -> None:
    text = appveyor_yml("build_script:", "  - echo hi").encode()
    text += b"# " + b"x" * (MAX_BODY_BYTES - len(text) - 2)
    assert len(text) == MAX_BODY_BYTES

    assert_accepted(world.call("PUT", world.settings_path + "/settings/yaml", text), 204)


def nested(depth: int) -> Any:
    """A body of ``depth`` levels of objects and arrays: {"name": ..., "pad": [[...]]}."""
    value: Any = []
    for _ in range(depth - 2):
        value = [value]
    return {"name": unique("role")[:40], "pad": value}


def test_a_body_nested_deeper_than_the_limit_is_refused(world: World) -> None:
    assert_refused(world, "POST", "/roles", json.dumps(nested(MAX_NESTING_DEPTH + 1)).encode(), str(MAX_NESTING_DEPTH))


def test_a_body_nested_as_deep_as_the_limit_is_accepted(world: World) -> None:
    assert_accepted(world.call("POST", "/roles", json.dumps(nested(MAX_NESTING_DEPTH)).encode()), 200)


def deep_yaml(depth: int) -> bytes:
    """appveyor.yml of ``depth`` levels: a notification setting of nested lists."""
    lists = depth - 3  # the document, notifications, the notification
    return f"notifications:\n  - provider: Webhook\n    x: {'[' * lists}{']' * lists}\n".encode()


def test_an_appveyor_yml_nested_deeper_than_the_limit_is_refused(world: World) -> None:
    path = world.settings_path + "/settings/yaml"

    assert_refused(world, "PUT", path, deep_yaml(MAX_YAML_DEPTH + 1), str(MAX_YAML_DEPTH))


def test_an_appveyor_yml_nested_as_deep_as_the_limit_is_accepted_and_its_settings_round_trip(world: World) -> None:
    assert_accepted(world.call("PUT", world.settings_path + "/settings/yaml", deep_yaml(MAX_YAML_DEPTH)), 204)

    settings = world.account.api.get(world.settings_path + "/settings").json["settings"]
    assert world.account.api.put("/projects", settings).status == 204
    assert world.call("PUT", world.settings_path + "/settings/yaml", b"").status == 204


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_no_json_numbers(world: World, constant: str) -> None:
    body = f'{{"nextBuildNumber": {constant}}}'.encode()

    assert_refused(world, "PUT", world.settings_path + "/settings/build-number", body, constant)


# Strings


def text(length: int) -> str:
    return "x" * length


def email(length: int) -> str:
    """A well-formed, unused e-mail address of ``length`` characters."""
    domain = f"@{uuid.uuid4().hex[:8]}.example"
    return "a" * (length - len(domain)) + domain


@dataclass(frozen=True)
class Limited:
    """A string field of one request, its limit, and what a request with a value of exactly that length gets."""

    name: str
    field: str
    limit: int
    request: Callable[[World, str], tuple[str, str, Any]]
    accepted: int
    value: Callable[[int], str] = text


def new_user(world: World, **fields: str) -> tuple[str, str, Any]:
    body = {"fullName": "Ann", "email": email(40), "roleId": world.user_role(), "generatePassword": True, **fields}
    if "password" in fields:
        body.update(generatePassword=False, confirmPassword=fields["password"])
    return "POST", "/users", body


def settings_with(world: World, **fields: str) -> tuple[str, str, Any]:
    settings = world.account.api.get(world.settings_path + "/settings").json["settings"]
    return "PUT", "/projects", {**settings, **fields}


def variables_with(world: World, variable: dict[str, Any]) -> tuple[str, str, Any]:
    return "PUT", world.settings_path + "/settings/environment-variables", [variable]


def environment_with(world: World, name: str, setting: str = "url") -> tuple[str, str, Any]:
    settings = {"providerSettings": [named(setting, "http://127.0.0.1:9/")], "environmentVariables": []}
    return "POST", "/environments", {"name": name, "provider": "Webhook", "settings": settings}


def start_build(world: World, **fields: Any) -> tuple[str, str, Any]:
    return "POST", "/builds", {**world.target, "branch": "master", **fields}


def start_deployment(world: World, **fields: Any) -> tuple[str, str, Any]:
    body = {"environmentName": "nowhere", **world.target, "buildVersion": "1.0.1", **fields}
    return "POST", "/deployments", body


def agent_call(path: str, body: dict[str, Any]) -> Callable[[World, str], tuple[str, str, Any]]:
    return lambda world, _: ("AGENT", path, body)


STRINGS = [
    Limited("user fullName", "fullName", 100, lambda w, v: new_user(w, fullName=v), 204),
    Limited("user email", "email", 254, lambda w, v: new_user(w, email=v), 204, email),
    Limited("user password", "password", 256, lambda w, v: new_user(w, password=v), 204),
    Limited("user update fullName", "fullName", 100, lambda w, v: ("PUT", "/users", {**w.user, "fullName": v}), 204),
    Limited(
        "user update notification",
        "failedBuildNotification",
        256,
        lambda w, v: ("PUT", "/users", {**w.user, "failedBuildNotification": v}),
        204,
    ),
    Limited(
        "collaborator email",
        "email",
        254,
        lambda w, v: ("POST", "/collaborators", {"email": v, "roleId": w.user_role()}),
        204,
        email,
    ),
    Limited("role name", "name", 50, lambda w, v: ("POST", "/roles", {"name": v[:-8] + uuid.uuid4().hex[:8]}), 200),
    Limited("role update name", "name", 50, lambda w, v: ("PUT", "/roles", {**w.role, "name": v}), 200),
    Limited(
        "project repositoryName",
        "repositoryName",
        512,
        lambda w, v: ("POST", "/projects", {"repositoryProvider": "gitHub", "repositoryName": "octo/" + v[5:]}),
        200,
    ),
    Limited("settings name", "name", 100, lambda w, v: settings_with(w, name=v), 204),
    Limited(
        "settings repositoryBranch", "repositoryBranch", 256, lambda w, v: settings_with(w, repositoryBranch=v), 204
    ),
    Limited(
        "settings versionFormat",
        "versionFormat",
        256,
        lambda w, v: settings_with(w, versionFormat="{build}" + v[7:]),
        204,
    ),
    Limited(
        "yaml version",
        "versionFormat",
        256,
        lambda w, v: ("PUT", w.settings_path + "/settings/yaml", f"version: '{{build}}{v[7:]}'\n".encode()),
        204,
    ),
    Limited(
        "project variable name", "environmentVariables", 256, lambda w, v: variables_with(w, named(v, "value")), 204
    ),
    Limited("build accountName", "accountName", 256, lambda w, v: start_build(w, accountName=v), 404),
    Limited("build projectSlug", "projectSlug", 256, lambda w, v: start_build(w, projectSlug=v), 404),
    Limited("build branch", "branch", 256, lambda w, v: start_build(w, branch=v), 404),
    Limited(
        "build variable name",
        "environmentVariables",
        256,
        lambda w, v: start_build(w, environmentVariables={v: "1"}),
        200,
    ),
    Limited(
        "deployment environmentName", "environmentName", 100, lambda w, v: start_deployment(w, environmentName=v), 404
    ),
    Limited("deployment buildVersion", "buildVersion", 256, lambda w, v: start_deployment(w, buildVersion=v), 404),
    Limited(
        "deployment variable name",
        "environmentVariables",
        256,
        lambda w, v: start_deployment(w, environmentVariables={v: "1"}),
        404,
    ),
    Limited("environment name", "name", 100, lambda w, v: environment_with(w, v[:-8] + uuid.uuid4().hex[:8]), 200),
    Limited(
        "environment setting name",
        "settings.providerSettings",
        256,
        lambda w, v: environment_with(w, unique("env"), setting=v),
        200,
    ),
    Limited(
        "environment access key",
        "environmentAccessKey",
        1024,
        lambda w, v: ("PUT", "/environments", {**w.environment, "environmentAccessKey": v}),
        400,
    ),
    Limited("agent name", "name", 256, agent_call("/api/agent/jobs/next", {}), 204),
    Limited("agent result message", "message", 4096, agent_call("/api/agent/jobs/nojob/result", {}), 404),
]


def limited_request(world: World, case: Limited, length: int) -> tuple[str, str, Any]:
    value = case.value(length)
    assert len(value) == length
    method, path, body = case.request(world, value)
    if method == "AGENT":
        return method, path, {**body, case.field: value}
    return method, path, body


def send(world: World, method: str, path: str, body: Any) -> Reply:
    if method != "AGENT":
        return world.call(method, path, body)
    reply = world.account.client.http.post(
        path, headers={"Authorization": f"Bearer {world.agent_key}"}, body=json.dumps(body).encode()
    )
    return Reply(reply.status_code, reply.body, dict(reply.headers))


@pytest.mark.parametrize("case", STRINGS, ids=lambda case: case.name)
def test_a_string_over_its_limit_is_refused_naming_the_field_and_the_limit(world: World, case: Limited) -> None:
    method, path, body = limited_request(world, case, case.limit + 1)
    before = world.snapshot()

    reply = send(world, method, path, body)

    assert reply.status == 400, reply.body
    message = reply.json["message"]
    assert case.field in message and f"at most {case.limit}" in message, message
    assert f"request.{case.field}" in reply.json["modelState"]
    assert world.snapshot() == before


@pytest.mark.parametrize("case", STRINGS, ids=lambda case: case.name)
def test_a_string_of_exactly_its_limit_is_accepted(world: World, case: Limited) -> None:
    method, path, body = limited_request(world, case, case.limit)

    assert_accepted(send(world, method, path, body), case.accepted)


def test_a_query_parameter_over_the_limit_is_refused(world: World) -> None:
    assert_refused(world, "GET", f"{world.path}/history?recordsNumber=10&branch={text(257)}", None, "branch", "256")


def test_a_query_parameter_of_exactly_the_limit_is_accepted(world: World) -> None:
    assert_accepted(world.call("GET", f"{world.path}/history?recordsNumber=10&branch={text(256)}"), 200)


PATHS = [
    ("GET", "/projects/{account}/{long}", "projectSlug"),
    ("GET", "/projects/{long}/{slug}", "accountName"),
    ("GET", "/projects/{account}/{slug}/build/{long}", "buildVersion"),
    ("GET", "/projects/{account}/{slug}/branch/{long}", "buildBranch"),
    ("DELETE", "/builds/{account}/{slug}/{long}", "buildVersion"),
    ("GET", "/buildjobs/{long}/log", "jobId"),
    ("GET", "/buildjobs/job/artifacts/{long}", "part1"),
]


@pytest.mark.parametrize(("method", "route", "name"), PATHS, ids=[f"{m} {r}" for m, r, _ in PATHS])
def test_a_path_segment_longer_than_any_name_names_nothing(world: World, method: str, route: str, name: str) -> None:
    path = route.format(account=world.account.name, slug=world.project.project["slug"], long=text(257))

    assert_refused(world, method, path, None, name, "256", status=404)


def test_an_account_prefix_longer_than_any_name_names_nothing(world: World) -> None:
    reply = world.account.api.get(f"/account/{text(257)}/roles")

    assert reply.status == 404, reply.body
    assert "256" in reply.json["message"]


def test_a_path_segment_of_exactly_the_limit_is_looked_up(world: World) -> None:
    reply = world.call("GET", f"{world.path}/build/{text(256)}")

    assert reply.status == 404, reply.body
    assert "256" not in reply.json["message"]


# Sizes of what is stored


def test_a_secure_value_over_4096_bytes_is_refused(world: World) -> None:
    variable = named("SECRET", "é" * 2048 + "x", secure=True)  # 4097 bytes in UTF-8

    assert_refused(world, *variables_with(world, variable), "4096")


@pytest.mark.parametrize(
    "value", ["", "abc", "x" * 4096, "é" * 2048], ids=["empty", "3 characters", "4096 ascii", "4096 bytes utf-8"]
)
def test_a_secure_value_of_3_characters_to_4096_bytes_is_stored(world: World, value: str) -> None:
    variable = named("SECRET", value, secure=True)
    reply = world.call(*variables_with(world, variable))

    if value:
        assert_accepted(reply, 204)
    else:  # nothing for KMS to encrypt, nor for the log to mask: a refusal, no longer a server error
        assert reply.status == 400 and "3 characters" in reply.json["message"], reply.body


def test_more_than_200_new_secure_values_at_once_are_refused(world: World) -> None:
    variables = [named(f"S{index}", f"secret-{index}", secure=True) for index in range(201)]

    assert_refused(world, "PUT", world.settings_path + "/settings/environment-variables", variables, "200")


def test_200_new_secure_values_at_once_are_stored(world: World) -> None:
    variables = [named(f"S{index}", f"secret-{index}", secure=True) for index in range(200)]

    assert_accepted(world.call("PUT", world.settings_path + "/settings/environment-variables", variables), 204)


def configuration_of_size(size: int) -> dict[str, Any]:
    """A configuration whose stored form (no secrets, so no ciphertext) is exactly ``size`` bytes of JSON."""

    def stored_size(length: int) -> int:
        configuration = {**default_configuration(), "environmentVariables": [named("PAD", "x" * length)]}
        return len(json.dumps(valid_configuration(configuration)))

    length = size - stored_size(1) + 1
    assert stored_size(length) == size
    return {"environmentVariables": [named("PAD", "x" * length)]}


def test_a_configuration_over_its_stored_size_is_refused(world: World) -> None:
    method, path, body = settings_with(world)
    body["configuration"] = configuration_of_size(MAX_CONFIGURATION_BYTES + 1)

    assert_refused(world, method, path, body, "configuration", str(MAX_CONFIGURATION_BYTES))


def test_a_configuration_of_exactly_its_stored_size_is_accepted(world: World) -> None:
    method, path, body = settings_with(world)
    body["configuration"] = configuration_of_size(MAX_CONFIGURATION_BYTES)

    assert_accepted(world.call(method, path, body), 204)


def test_variables_over_the_size_limit_through_the_variables_endpoint_are_refused(world: World) -> None:
    variables = [named(f"V{index}", "x" * 4000) for index in range(60)]

    path = world.settings_path + "/settings/environment-variables"

    assert_refused(world, "PUT", path, variables, "environmentVariables", str(MAX_CONFIGURATION_BYTES))


def test_an_appveyor_yml_over_the_size_limit_is_refused(world: World) -> None:
    yml = "environment:\n" + "".join(f"  V{index}: {'x' * 4000}\n" for index in range(60))

    assert_refused(world, "PUT", world.settings_path + "/settings/yaml", yml.encode(), str(MAX_CONFIGURATION_BYTES))


START_VARIABLES = [("build", start_build, 200), ("deployment", start_deployment, 404)]


@pytest.mark.parametrize(("what", "start", "accepted"), START_VARIABLES, ids=[what for what, _, _ in START_VARIABLES])
def test_start_variables_over_their_limits_are_refused(world: World, what: str, start: Any, accepted: int) -> None:
    too_many = {f"V{index}": "1" for index in range(101)}
    too_big = {"V": "x" * (65_536 - len(json.dumps({"V": ""})) + 1)}

    assert_refused(world, *start(world, environmentVariables=too_many), "environmentVariables", "100")
    assert_refused(world, *start(world, environmentVariables=too_big), "environmentVariables", "65536")


@pytest.mark.parametrize(("what", "start", "accepted"), START_VARIABLES, ids=[what for what, _, _ in START_VARIABLES])
def test_start_variables_at_their_limits_are_accepted(world: World, what: str, start: Any, accepted: int) -> None:
    as_many = {f"V{index}": "1" for index in range(100)}
    as_big = {"V": "x" * (65_536 - len(json.dumps({"V": ""})))}
    assert len(json.dumps(as_big)) == 65_536

    assert_accepted(world.call(*start(world, environmentVariables=as_many)), accepted)
    assert_accepted(world.call(*start(world, environmentVariables=as_big)), accepted)


# Numbers


@dataclass(frozen=True)
class Ranged:
    """A number field of one request, its range, and what a request with the range's upper end gets."""

    name: str
    field: str
    minimum: int
    maximum: int
    request: Callable[[World, Any], tuple[str, str, Any]]
    accepted: int


def query(path: str, name: str, **others: Any) -> Callable[[World, Any], tuple[str, str, Any]]:
    extra = "".join(f"&{key}={value}" for key, value in others.items())
    return lambda w, v: ("GET", f"{w.path}{path}?{name}={v}{extra}", None)


NUMBERS = [
    Ranged("user roleId", "roleId", 1, MAX_ID, lambda w, v: new_user(w, roleId=v), 400),
    Ranged("user update userId", "userId", 1, MAX_ID, lambda w, v: ("PUT", "/users", {**w.user, "userId": v}), 404),
    Ranged("user update roleId", "roleId", 1, MAX_ID, lambda w, v: ("PUT", "/users", {**w.user, "roleId": v}), 400),
    Ranged(
        "collaborator roleId",
        "roleId",
        1,
        MAX_ID,
        lambda w, v: ("POST", "/collaborators", {"email": email(30), "roleId": v}),
        400,
    ),
    Ranged(
        "collaborator update userId",
        "userId",
        1,
        MAX_ID,
        lambda w, v: ("PUT", "/collaborators", {"userId": v, "roleId": w.user_role()}),
        404,
    ),
    Ranged("role update roleId", "roleId", 1, MAX_ID, lambda w, v: ("PUT", "/roles", {**w.role, "roleId": v}), 404),
    Ranged("settings projectId", "projectId", 1, MAX_ID, lambda w, v: ("PUT", "/projects", {"projectId": v}), 404),
    Ranged(
        "settings nextBuildNumber",
        "nextBuildNumber",
        1,
        MAX_BUILD_NUMBER,
        lambda w, v: settings_with(w, nextBuildNumber=v),
        204,
    ),
    Ranged(
        "build number",
        "nextBuildNumber",
        1,
        MAX_BUILD_NUMBER,
        lambda w, v: ("PUT", w.settings_path + "/settings/build-number", {"nextBuildNumber": v}),
        204,
    ),
    Ranged(
        "build pullRequestId",
        "pullRequestId",
        1,
        MAX_ID,
        lambda w, v: ("POST", "/builds", {**w.target, "pullRequestId": v}),
        404,
    ),
    Ranged("re-run buildId", "buildId", 1, MAX_ID, lambda w, v: ("PUT", "/builds", {"buildId": v}), 404),
    Ranged(
        "environment id",
        "deploymentEnvironmentId",
        1,
        MAX_ID,
        lambda w, v: ("PUT", "/environments", {**w.environment, "deploymentEnvironmentId": v}),
        404,
    ),
    Ranged(
        "stop deploymentId",
        "deploymentId",
        1,
        MAX_ID,
        lambda w, v: ("PUT", "/deployments/stop", {"deploymentId": v}),
        404,
    ),
    Ranged("history recordsNumber", "recordsNumber", 1, 100, query("/history", "recordsNumber"), 200),
    Ranged("history startBuildId", "startBuildId", 1, MAX_ID, query("/history", "startBuildId", recordsNumber=10), 200),
    Ranged("deployments recordsNumber", "recordsNumber", 1, 20, query("/deployments", "recordsNumber"), 200),
    Ranged(
        "deployments startDeploymentId", "startDeploymentId", 1, MAX_ID, query("/deployments", "startDeploymentId"), 200
    ),
]


def out_of_range(case: Ranged) -> list[Any]:
    """Values past either end: the next integer, a huge one (also as digits), and one past 64 bits."""
    return [case.maximum + 1, case.minimum - 1, HUGE, str(HUGE), 2**64]


@pytest.mark.parametrize("case", NUMBERS, ids=lambda case: case.name)
def test_a_number_out_of_its_range_is_refused_naming_the_field_and_the_range(world: World, case: Ranged) -> None:
    before = world.snapshot()
    for value in out_of_range(case):
        reply = world.call(*case.request(world, value))

        assert reply.status == 400, (value, reply.body)
        assert reply.json["message"] == f"{case.field} must be between {case.minimum} and {case.maximum}.", value
    assert world.snapshot() == before


@pytest.mark.parametrize("case", NUMBERS, ids=lambda case: case.name)
def test_the_ends_of_a_range_are_accepted(world: World, case: Ranged) -> None:
    assert_accepted(world.call(*case.request(world, case.maximum)), case.accepted)
    assert world.call(*case.request(world, case.minimum)).status < 500


# What a build would store, from the repository's appveyor.yml


@pytest.mark.parametrize(
    ("yml", "mentions"),
    [
        (appveyor_yml(f"version: '{{build}}-{text(246)}'"), ("build version", "256")),  # 10 + 1 + 246
        (  # a file within its own size limit, whose aliases make a configuration over the stored one's
            f"environment:\n  V0: &long {text(4000)}\n" + "".join(f"  V{index}: *long\n" for index in range(1, 60)),
            ("configuration", str(MAX_CONFIGURATION_BYTES)),
        ),
    ],
    ids=["version", "configuration"],
)
def test_a_build_that_could_not_be_stored_is_refused_at_start_and_stores_nothing(
    world: World, git_server: GitServer, yml: str, mentions: tuple[str, ...]
) -> None:
    project = BuildProject(world.account, git_server, {"appveyor.yml": yml})
    before = world.account.api.get(project.path + "/settings").json["settings"]["nextBuildNumber"]

    reply = world.account.api.post(
        "/builds", {"accountName": world.account.name, "projectSlug": project.project["slug"], "branch": "master"}
    )

    assert reply.status == 400, reply.body
    assert all(mention in reply.json["message"] for mention in mentions), reply.body
    assert world.account.api.get(project.path + "/history?recordsNumber=10").json["builds"] == []
    assert world.account.api.get(project.path + "/settings").json["settings"]["nextBuildNumber"] == before


def test_a_build_whose_version_could_be_exactly_256_characters_long_starts(world: World, git_server: GitServer) -> None:
    project = BuildProject(
        world.account, git_server, {"appveyor.yml": appveyor_yml(f"version: '{{build}}-{text(245)}'")}
    )

    reply = world.account.api.post("/builds", {**world.target, "projectSlug": project.project["slug"]})

    assert_accepted(reply, 200)
    assert reply.json["version"] == f"1-{text(245)}"


# The build matrix


def test_a_matrix_of_millions_of_jobs_is_refused_before_any_job_is_built(
    client: Client, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3,000 configurations x 3,000 platforms once took 9,000,000 jobs, 15 s and gigabytes to refuse."""
    account = new_account(client)
    names = [f"c{index}" for index in range(3000)]
    project = BuildProject(
        account,
        git_server,
        {
            "appveyor.yml": appveyor_yml(
                "configuration:", *[f"  - {name}" for name in names], "platform:", *[f"  - {name}" for name in names]
            )
        },  # fmt: skip
    )
    built: list[object] = []
    combination = matrix._Combination

    def counted(*args: Any) -> Any:
        built.append(args)
        if len(built) > 100_000:  # stop a builder that would go on to 9,000,000
            raise RuntimeError("the matrix is being built past any limit")
        return combination(*args)

    monkeypatch.setattr(matrix, "_Combination", counted)
    reply = account.api.post("/builds", {"accountName": account.name, "projectSlug": project.project["slug"],
                                         "branch": "master"})  # fmt: skip

    assert reply.status == 400, reply.body
    assert "9000000" in reply.json["message"] and str(matrix.MAX_COMBINATIONS) in reply.json["message"]
    assert built == []
    assert account.api.get(project.path + "/history?recordsNumber=10").json["builds"] == []


# Secure values too short to mask (issue 19, finding 10)


@pytest.mark.parametrize("value", ["a", "10", " 7 "], ids=["one", "two", "two with spaces"])
@pytest.mark.parametrize("where", ["project variables", "appveyor.yml", "environment"])
def test_a_secure_value_too_short_to_mask_is_refused_where_it_is_saved(world: World, where: str, value: str) -> None:
    """The build log masks no value under 3 characters (masking "a" would destroy the log): such a secret would
    be printed in plain text, so it is not taken."""
    if where == "project variables":
        request = variables_with(world, named("SECRET", value, secure=True))
    elif where == "appveyor.yml":
        yml = appveyor_yml("environment:", "  SECRET:", f"    secure: '{value}'")
        request = "PUT", world.settings_path + "/settings/yaml", yml.encode()
    else:
        settings = {"providerSettings": [named("url", "http://127.0.0.1:9/")],
                    "environmentVariables": [named("SECRET", value, secure=True)]}  # fmt: skip
        request = "POST", "/environments", {"name": unique("short"), "provider": "Webhook", "settings": settings}

    assert_refused(world, *request, "3 characters")


def test_a_short_secure_value_stored_before_the_limit_is_kept(world: World) -> None:
    project = world.account.api.get(world.settings_path + "/settings").json["project"]
    owner = secrets.Owner(int(project["accountId"]), "project", int(project["projectId"]))
    token = secrets.encrypt(owner, "variable/OLD", "ab")  # stored before short values were refused
    stored = project_store.get_project_by_id(owner.account_id, owner.object_id)
    assert stored is not None
    configuration = {**stored.configuration, "environmentVariables": [named("OLD", token, secure=True)]}
    project_store.save_settings(stored, replace(stored, configuration=configuration))

    reply = world.call(*variables_with(world, named("OLD", token, secure=True)))

    assert_accepted(reply, 204)
    shown = world.call("GET", world.settings_path + "/settings/environment-variables").json
    assert shown == [named("OLD", token, secure=True)]
