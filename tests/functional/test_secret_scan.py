"""Issue 6: after a whole scenario (team, projects, variables, environments, a build, deployments), no response body,
no object in the bucket (logs, artifacts) and no DynamoDB item holds a secret in plain text, and the attributes that
hold secrets hold ciphertext or hashes.

Where each kind of secret rests, and in what form (the scan below checks every one of them):

- KMS tokens (``cvy1:`` + base64 ciphertext, bound to the account): every ``{"isEncrypted": true, "value"}`` and
  every ``{"secure": ...}`` inside ``projects.configuration``, ``builds.configuration`` (the merged copy a build
  runs with), ``jobs.spec.variables`` (a matrix row's variables) and ``environments.settings`` (provider settings,
  variables, notifications); and ``environments.access_key``.
- SHA-256 hashes (hex): ``api-keys.key_hash`` (every API key), ``environments.access_key_hash`` and the key of the
  access key's claim in ``uniques``.
- Salted scrypt hashes: ``members.password_hash``.

Every secret value below is chosen (distinct and recognisable) except the access key an environment is created
with, which the add response shows once, by design, before the scenario replaces it with a chosen one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeDeserializer
from chalice.test import Client

from chalicelib.config import settings
from chalicelib.deploy.destinations import delivery_binding
from chalicelib.domain.shared import secrets
from chalicelib.domain.team.accounts import create_account, create_api_key
from chalicelib.domain.team.keys_and_passwords import password_matches
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import named, wait_for_deployment
from tests.gitserver import GitServer
from tests.peers import FtpServer, WebhookReceiver
from tests.support import Account, Caller, Reply, unique


def secret(kind: str) -> str:
    return f"sekrit-{kind}-{uuid.uuid4().hex[:12]}"


OWNER_KEY = secret("owner-key")
USER_LEVEL_KEY = f"v2.{secret('user-level-key')}"
MEMBER_KEY = secret("member-key")
FIRST_PASSWORD = secret("first-password")
PASSWORD = secret("password")
PROJECT_VARIABLE = secret("project-variable")  # the environment-variables endpoint
SETTINGS_VARIABLE = secret("settings-variable")  # PUT /api/projects
SETTINGS_PROVIDER = secret("settings-provider")  # a provider setting of the project's deployments
YAML_VARIABLE = secret("yaml-variable")  # secure: in the project's appveyor.yml
YAML_NOTIFICATION = secret("yaml-notification")
YAML_XAMARIN = secret("yaml-xamarin")
REPOSITORY_VARIABLE = secret("repository-variable")  # secure: token in the repository's appveyor.yml
MATRIX_VARIABLE = secret("matrix-variable")  # secure: token in a matrix row of the repository's appveyor.yml
WEBHOOK_AUTHORIZATION = secret("webhook-authorization")
ENVIRONMENT_VARIABLE = secret("environment-variable")
ENVIRONMENT_NOTIFICATION = secret("environment-notification")
FTP_PASSWORD = secret("ftp-password")
ACCESS_KEY = secret("access-key")
REFUSED_REQUEST_VARIABLE = secret("refused-request-variable")  # an "encrypted" start variable: refused

STORED_AS_TOKENS = [
    PROJECT_VARIABLE,
    SETTINGS_VARIABLE,
    SETTINGS_PROVIDER,
    YAML_VARIABLE,
    YAML_NOTIFICATION,
    YAML_XAMARIN,
    REPOSITORY_VARIABLE,
    MATRIX_VARIABLE,
    WEBHOOK_AUTHORIZATION,
    ENVIRONMENT_VARIABLE,
    ENVIRONMENT_NOTIFICATION,
    FTP_PASSWORD,
    ACCESS_KEY,
]
SECRETS = [
    OWNER_KEY,
    USER_LEVEL_KEY,
    MEMBER_KEY,
    FIRST_PASSWORD,
    PASSWORD,
    *STORED_AS_TOKENS,
    REFUSED_REQUEST_VARIABLE,
]
# Not secrets: stored and shown as they are, so the scans must find them (proof that they can find anything).
PLAIN_VARIABLE = f"plain-variable-{uuid.uuid4().hex[:12]}"
PLAIN_REQUEST_VARIABLE = f"plain-request-{uuid.uuid4().hex[:12]}"
PLAIN_DEPLOYMENT_VARIABLE = f"plain-deployment-{uuid.uuid4().hex[:12]}"
ECHOED = ["PROJECT_VAR", "SETTINGS_VAR", "YAML_VAR", "REPOSITORY_VAR", "MATRIX_VAR"]


def forms(value: str) -> list[str]:
    """What a leak of ``value`` could look like: the value, and its base64 form (a log masks that too)."""
    return [value, base64.b64encode(value.encode()).decode()]


def leaks(text: str | bytes, values: list[str]) -> list[str]:
    """The values of which ``text`` holds some form."""
    data = text.encode() if isinstance(text, str) else text
    return [value for value in values if any(form.encode() in data for form in forms(value))]


# Recording every response


@dataclass
class Recorded:
    method: str
    path: str
    reply: Reply


@dataclass
class RecordingCaller(Caller):
    """A Caller that keeps every response it receives."""

    recorded: list[Recorded] = field(default_factory=list)

    def call(
        self, method: str, path: str, body: Any = None, raw: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        reply = super().call(method, path, body, raw=raw, headers=headers)
        self.recorded.append(Recorded(method, self.prefix + path, reply))
        return reply


@dataclass
class RecordingAccount(Account):
    """An Account whose callers (BuildProject and the helpers use ``api``) record every response."""

    recorded: list[Recorded] = field(default_factory=list)

    @property
    def api(self) -> Caller:
        return RecordingCaller(self.client, self.key, recorded=self.recorded)

    def caller(self, key: str, prefix: str = "/api") -> RecordingCaller:
        return RecordingCaller(self.client, key, prefix, recorded=self.recorded)


class LogRecords(logging.Handler):
    """Every log record of the service (INFO and up), formatted as it would be written to CloudWatch."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


# The scenario


def ok(reply: Reply, status: int = 200) -> Any:
    assert reply.status == status, reply.body
    return reply.json if reply.body else None


@dataclass
class Scenario:
    account: RecordingAccount
    account_id: int
    generated_access_key: str  # shown once, by design, in the response that adds the environment
    build_log: str
    deployment_logs: list[str]
    service_log: list[str]


def tokens_of(project: BuildProject, variables: dict[str, str]) -> list[str]:
    """The tokens of new secrets of the project's ``variables``, set in its settings as a client sets them to copy
    the tokens into appveyor.yml (a token decrypts only in its project, for its variable)."""
    path = project.path + "/settings/environment-variables"
    ok(project.account.api.put(path, [named(name, value, secure=True) for name, value in variables.items()]), 204)
    shown = ok(project.account.api.get(path))
    return [variable["value"]["value"] for variable in shown]


def repository_yml(repository_token: str, matrix_token: str) -> str:
    echoes = [f'  - echo "{name}=${name}"' for name in ECHOED]
    return appveyor_yml(
        "environment:",
        "  REPOSITORY_VAR:",
        f"    secure: {repository_token}",
        "  matrix:",
        "    - MATRIX_VAR:",
        f"        secure: {matrix_token}",
        "build_script:",
        *echoes,
        '  - echo "PLAIN_VAR=$PLAIN_VAR REQUEST_VAR=$REQUEST_VAR"',
        '  - printf %s "$PROJECT_VAR" | base64',
        "  - mkdir -p out && echo app-$APPVEYOR_BUILD_VERSION > out/app.txt",
        "artifacts:",
        "  - path: out/app.txt",
        "    name: app",
    )


def project_yaml() -> str:
    return appveyor_yml(
        "environment:",
        f"  PLAIN_VAR: {PLAIN_VARIABLE}",
        "  YAML_VAR:",
        f"    secure: {YAML_VARIABLE}",
        "xamarin:",
        "  password:",
        f"    secure: {YAML_XAMARIN}",
        "notifications:",
        "  - provider: Webhook",
        "    url: https://hooks.example.com/build",
        "    headers:",
        "      Authorization:",
        f"        secure: {YAML_NOTIFICATION}",
    )


def set_up_the_team(account: RecordingAccount) -> None:
    """A user with a password set, then changed, and keys: the owner's, a user-level one, the user's."""
    user_role = next(role["roleId"] for role in ok(account.api.get("/roles")) if role["name"] == "User")
    email = f"{unique('member')}@team.example"
    ok(
        account.api.post(
            "/users",
            {
                "fullName": "Ann",
                "email": email,
                "roleId": user_role,
                "generatePassword": False,
                "password": FIRST_PASSWORD,
                "confirmPassword": FIRST_PASSWORD,
            },
        ),
        204,
    )
    user = next(user for user in ok(account.api.get("/users")) if user["email"] == email)
    ok(account.api.put("/users", {**user, "password": PASSWORD}), 204)
    ok(account.api.get(f"/users/{user['userId']}"))
    create_api_key(account.name, email, MEMBER_KEY)
    ok(account.caller(MEMBER_KEY).get("/projects"))
    create_api_key(account.name, account.owner_email, USER_LEVEL_KEY)
    ok(account.caller(USER_LEVEL_KEY, f"/api/account/{account.name}").get("/users"))


def configure_the_project(project: BuildProject) -> None:
    """Secrets through each way in: appveyor.yml text, the whole settings object, the variables endpoint."""
    api, path = project.account.api, project.path
    ok(api.put(path + "/settings/yaml", raw=project_yaml().encode(), headers={"Content-Type": "text/plain"}), 204)
    current = ok(api.get(path + "/settings"))["settings"]
    configuration = current["configuration"]
    configuration["environmentVariables"].append(named("SETTINGS_VAR", SETTINGS_VARIABLE, secure=True))
    configuration["deployments"] = [
        {
            "provider": "FTP",
            "providerSettings": [named("server", "ftp.example.com"), named("password", SETTINGS_PROVIDER, secure=True)],
            "onBranch": [],
            "onEnvironmentVariables": [],
        }
    ]
    ok(api.put("/projects", current), 204)
    variables = ok(api.get(path + "/settings/environment-variables"))
    ok(
        api.put(path + "/settings/environment-variables", [*variables, named("PROJECT_VAR", PROJECT_VARIABLE, True)]),
        204,
    )
    for read in ("", "/settings", "/settings/yaml", "/settings/environment-variables", "/history?recordsNumber=10"):
        assert api.get(path + read).status == 200


def add_environments(account: RecordingAccount, webhook_url: str, ftp: FtpServer) -> tuple[dict[str, Any], str]:
    """A Webhook environment (its access key then replaced by a chosen one) and an FTP one; the first, and the
    access key it was created with."""
    webhook = ok(
        account.api.post(
            "/environments",
            {
                "name": unique("hook"),
                "provider": "Webhook",
                "settings": {
                    "providerSettings": [
                        named("url", webhook_url),
                        named("authorization", WEBHOOK_AUTHORIZATION, True),
                    ],
                    "environmentVariables": [named("ENVIRONMENT_VAR", ENVIRONMENT_VARIABLE, True)],
                    "notifications": [
                        {"provider": "Email", "settings": {"password": {"secure": ENVIRONMENT_NOTIFICATION}}}
                    ],
                },
            },
        )
    )
    generated = webhook["environmentAccessKey"]
    shown = ok(account.api.get(f"/environments/{webhook['deploymentEnvironmentId']}/settings"))["environment"]
    webhook = ok(account.api.put("/environments", {**shown, "environmentAccessKey": ACCESS_KEY}))
    ftp_settings = [
        named("server", f"{ftp.host}:{ftp.port}"),
        named("username", ftp.username),
        named("password", FTP_PASSWORD, True),
    ]
    ftp_environment = ok(
        account.api.post(
            "/environments",
            {
                "name": unique("ftp"),
                "provider": "FTP",
                "settings": {"providerSettings": ftp_settings, "environmentVariables": []},
            },
        )
    )
    assert account.api.get(f"/environments/{ftp_environment['deploymentEnvironmentId']}/settings").status == 200
    assert account.api.get("/environments").status == 200
    return webhook, generated


def deploy_everywhere(project: BuildProject, version: str) -> list[str]:
    """Deploy the build to every environment of the account; the deployments' logs."""
    api = project.account.api
    target = {
        "accountName": project.project["accountName"],
        "projectSlug": project.project["slug"],
        "buildVersion": version,
    }
    logs = []
    for environment in ok(api.get("/environments")):
        variables = {"DEPLOYMENT_VAR": PLAIN_DEPLOYMENT_VARIABLE}
        started = ok(
            api.post(
                "/deployments", {"environmentName": environment["name"], **target, "environmentVariables": variables}
            )
        )
        deployment = wait_for_deployment(project.account, started["deploymentId"])
        assert deployment["status"] == "success", deployment
        logs += [project.log(job["jobId"]) for job in deployment["jobs"]]
        ok(api.get(f"/deployments/{started['deploymentId']}"))
        ok(api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments"))
    ok(api.get(project.path + "/deployments"))
    return logs


def refuse_encrypted_start_variables(project: BuildProject, version: str) -> None:
    """Start variables are plain by contract: one sent as AppVeyor sends a secure value is refused, not stored."""
    api = project.account.api
    encrypted = {"REFUSED_VAR": {"isEncrypted": True, "value": REFUSED_REQUEST_VARIABLE}}
    target = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"]}
    environment = ok(api.get("/environments"))[0]["name"]
    assert (
        api.post(
            "/deployments",
            {"environmentName": environment, **target, "buildVersion": version, "environmentVariables": encrypted},
        ).status
        == 400
    )
    assert api.post("/builds", {**target, "branch": "master", "environmentVariables": encrypted}).status == 400


@pytest.fixture(scope="module")
def scenario(
    client: Client, git_server: GitServer, pump: SqsPump, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scenario]:
    service_log = LogRecords()
    root = logging.getLogger()
    level = root.level
    root.addHandler(service_log)
    root.setLevel(logging.INFO)
    try:
        name = unique("acct")
        email = f"owner@{name}.example"
        assert create_account(name, email, OWNER_KEY) == OWNER_KEY
        account = RecordingAccount(client, name, email, OWNER_KEY)
        set_up_the_team(account)
        project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - exit 1")})
        tokens = tokens_of(project, {"REPOSITORY_VAR": REPOSITORY_VARIABLE, "MATRIX_VAR": MATRIX_VARIABLE})
        project.repository.commit({"appveyor.yml": repository_yml(*tokens)})
        configure_the_project(project)

        build = project.run(branch="master", environmentVariables={"REQUEST_VAR": PLAIN_REQUEST_VARIABLE})
        assert build["status"] == "success", build
        (job,) = project.build(build["version"])["jobs"]
        build_log = project.log(job["jobId"])
        assert ok(account.api.get(f"/buildjobs/{job['jobId']}/artifacts"))

        ftp = FtpServer(tmp_path_factory.mktemp("ftp"))
        ftp.password = FTP_PASSWORD
        with ftp, WebhookReceiver() as receiver:
            webhook, generated = add_environments(account, f"{receiver.url}/deploy", ftp)
            deployment_logs = deploy_everywhere(project, build["version"])
            assert receiver.requests[0].headers["authorization"] == WEBHOOK_AUTHORIZATION  # delivered, decrypted
        refuse_encrypted_start_variables(project, build["version"])
        account_id = project.project["accountId"]
        yield Scenario(account, account_id, generated, build_log, deployment_logs, service_log.lines)
    finally:
        root.removeHandler(service_log)
        root.setLevel(level)


# What the build and the deployments showed


def test_the_build_log_shows_every_echoed_secret_masked(scenario: Scenario) -> None:
    for name in ECHOED:
        assert f"{name}=[secure]" in scenario.build_log, scenario.build_log
    assert f"PLAIN_VAR={PLAIN_VARIABLE} REQUEST_VAR={PLAIN_REQUEST_VARIABLE}" in scenario.build_log
    assert leaks(scenario.build_log, SECRETS) == []


def test_the_deployment_logs_do_not_show_the_environments_secrets(scenario: Scenario) -> None:
    assert len(scenario.deployment_logs) == 2
    for log in scenario.deployment_logs:
        assert "Deployment succeeded" in log
        assert leaks(log, SECRETS) == []


# (a) Responses


# The reads that show what holds a secret: the scan below is worth something only if it saw each of them answered.
SHOWING_SECRET_HOLDERS = (
    "/settings",
    "/settings/environment-variables",
    "/settings/yaml",
    "/api/environments",
    "/api/environments/1/settings",
    "/api/environments/2/settings",
    "/api/users/4",
    "/api/deployments/1",
    "/build/1.0.1",
    "/log",
    "/artifacts",
)


def test_no_response_body_holds_a_secret(scenario: Scenario) -> None:
    recorded = scenario.account.recorded
    answered = [entry.path for entry in recorded if entry.method == "GET" and entry.reply.status == 200]
    assert [end for end in SHOWING_SECRET_HOLDERS if not any(path.endswith(end) for path in answered)] == []
    found = [(entry.method, entry.path, leaks(entry.reply.body, SECRETS)) for entry in recorded]

    assert [leak for leak in found if leak[2]] == []


def test_the_generated_access_key_is_shown_once_in_the_response_that_adds_the_environment(scenario: Scenario) -> None:
    showing = [entry for entry in scenario.account.recorded if leaks(entry.reply.body, [scenario.generated_access_key])]

    assert [(entry.method, entry.path) for entry in showing] == [("POST", "/api/environments")]


def test_the_response_scan_finds_a_plain_value(scenario: Scenario) -> None:
    assert any(leaks(entry.reply.body, [PLAIN_VARIABLE]) for entry in scenario.account.recorded)


# (b) The bucket


def bucket_objects() -> dict[str, bytes]:
    s3 = boto3.client("s3")
    bucket = settings().bucket
    keys = [
        entry["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        for entry in page.get("Contents", [])
    ]
    return {key: s3.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


def test_no_object_in_the_bucket_holds_a_secret(scenario: Scenario) -> None:
    objects = bucket_objects()

    assert any(key.endswith("/log/log.txt") for key in objects)
    assert any(key.endswith("/artifacts/out/app.txt") for key in objects)
    assert {
        key: leaks(data, [*SECRETS, scenario.generated_access_key])
        for key, data in objects.items()
        if leaks(data, [*SECRETS, scenario.generated_access_key])
    } == {}


def test_the_bucket_scan_finds_a_plain_value(scenario: Scenario) -> None:
    assert any(leaks(data, [PLAIN_VARIABLE]) for data in bucket_objects().values())


# (c) DynamoDB


@dataclass(frozen=True)
class Found:
    table: str
    path: str
    value: Any


def app_tables() -> list[str]:
    prefix = settings().table_name("")
    dynamodb = boto3.client("dynamodb")
    names = [name for page in dynamodb.get_paginator("list_tables").paginate() for name in page["TableNames"]]
    return [name for name in names if name.startswith(prefix)]


def every_value(table: str, path: str, value: Any) -> Iterator[Found]:
    """Every scalar of an item at any depth, JSON held in strings included (PynamoDB's JSONAttribute)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from every_value(table, f"{path}.{key}", child)
    elif isinstance(value, list | set | tuple):
        for index, child in enumerate(value):
            yield from every_value(table, f"{path}[{index}]", child)
    else:
        yield Found(table, path, value)
        if isinstance(value, str) and value.startswith(("{", "[")):
            try:
                document = json.loads(value)
            except ValueError:
                return
            yield from every_value(table, f"{path}<json>", document)


@pytest.fixture(scope="module")
def stored(scenario: Scenario) -> list[dict[str, Any]]:
    """Every item of every table of the app, deserialised, with its table under ``__table``."""
    dynamodb = boto3.client("dynamodb")
    deserializer = TypeDeserializer()
    items = []
    for table in app_tables():
        for page in dynamodb.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                items.append(
                    {"__table": table, **{key: deserializer.deserialize(value) for key, value in item.items()}}
                )
    return items


def stored_values(items: list[dict[str, Any]]) -> list[Found]:
    return [found for item in items for found in every_value(item["__table"], "", item)]


def test_every_table_of_the_app_is_scanned(stored: list[dict[str, Any]]) -> None:
    tables = {item["__table"].removeprefix(settings().table_name("")) for item in stored}

    assert {"accounts", "members", "api-keys", "projects", "builds", "jobs", "environments", "deployments"} <= tables


def test_no_stored_attribute_holds_a_secret_at_any_depth(scenario: Scenario, stored: list[dict[str, Any]]) -> None:
    values = [*SECRETS, scenario.generated_access_key]
    found = [(item.table, item.path, leaks(str(item.value), values)) for item in stored_values(stored)]

    assert [leak for leak in found if leak[2]] == []


def test_the_stored_scan_finds_plain_values(stored: list[dict[str, Any]]) -> None:
    def tables_holding(value: str) -> set[str]:
        return {
            item.table.removeprefix(settings().table_name(""))
            for item in stored_values(stored)
            if leaks(str(item.value), [value])
        }

    assert {"projects", "builds"} <= tables_holding(PLAIN_VARIABLE)
    assert "builds" in tables_holding(PLAIN_REQUEST_VARIABLE)
    assert "deployments" in tables_holding(PLAIN_DEPLOYMENT_VARIABLE)


def owner_of(item: dict[str, Any]) -> secrets.Owner:
    """Who the secrets of a stored item belong to: its environment (its settings and variables bound to where it
    delivers them), else its project."""
    if item["__table"] == settings().table_name("environments"):
        stored_settings = item["settings"]
        stored_settings = json.loads(stored_settings) if isinstance(stored_settings, str) else stored_settings
        binding = delivery_binding(item["provider"], item["access_key_hash"], stored_settings)
        return secrets.Owner(int(item["account_id"]), "environment", int(item["environment_id"]), binding=binding)
    return secrets.Owner(int(item["account_id"]), "project", int(item["project_id"]))


def test_every_secure_value_stored_is_a_token_of_a_secret_of_its_owner(
    scenario: Scenario, stored: list[dict[str, Any]]
) -> None:
    decrypted: dict[str, set[str]] = {}
    for item in stored:
        for found in every_value(item["__table"], "", item):
            if "<json>" in found.path or not isinstance(found.value, str) or not found.value.startswith(("{", "[")):
                continue
            for holder, key, bound_to in secrets.secret_fields(json.loads(found.value)):
                value = holder[key]
                assert isinstance(value, str) and value.startswith(secrets.TOKEN_PREFIX), (found.table, found.path)
                plain = secrets.decrypt(owner_of(item), bound_to, value)
                assert leaks(base64.b64decode(value.removeprefix(secrets.TOKEN_PREFIX)), [plain]) == []
                where = f"{found.table.removeprefix(settings().table_name(''))}{found.path}"
                decrypted.setdefault(plain, set()).add(where)

    assert set(decrypted) == set(STORED_AS_TOKENS) - {ACCESS_KEY}
    assert {"projects.configuration", "builds.configuration"} <= decrypted[PROJECT_VARIABLE]
    assert any(where.startswith("jobs.spec") for where in decrypted[MATRIX_VARIABLE])
    assert any(where.startswith("environments.settings") for where in decrypted[WEBHOOK_AUTHORIZATION])


def items_of(stored: list[dict[str, Any]], table: str) -> list[dict[str, Any]]:
    return [item for item in stored if item["__table"] == settings().table_name(table)]


def sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def test_api_keys_are_stored_as_their_sha256(stored: list[dict[str, Any]]) -> None:
    hashes = {item["key_hash"] for item in items_of(stored, "api-keys")}

    assert {sha256(OWNER_KEY), sha256(USER_LEVEL_KEY), sha256(MEMBER_KEY)} <= hashes


def test_passwords_are_stored_as_salted_scrypt_hashes(stored: list[dict[str, Any]]) -> None:
    hashes = [item["password_hash"] for item in items_of(stored, "members") if item.get("password_hash")]

    assert hashes and all(stored_hash.startswith("scrypt$") for stored_hash in hashes)
    assert [stored_hash for stored_hash in hashes if password_matches(PASSWORD, stored_hash)] != []
    assert [stored_hash for stored_hash in hashes if password_matches(FIRST_PASSWORD, stored_hash)] == []


def test_the_access_key_is_stored_encrypted_and_hashed(scenario: Scenario, stored: list[dict[str, Any]]) -> None:
    (webhook,) = [item for item in items_of(stored, "environments") if item["provider"] == "Webhook"]

    assert webhook["access_key"].startswith(secrets.TOKEN_PREFIX)
    owner = owner_of(webhook)
    assert secrets.decrypt(owner, "accessKey", webhook["access_key"]) == ACCESS_KEY
    assert webhook["access_key_hash"] == sha256(ACCESS_KEY)
    assert any(sha256(ACCESS_KEY) in item["key"] for item in items_of(stored, "uniques"))


# The service's own log (CloudWatch, deployed)


def test_the_service_log_holds_no_secret(scenario: Scenario) -> None:
    assert [line for line in scenario.service_log if leaks(line, [*SECRETS, scenario.generated_access_key])] == []
