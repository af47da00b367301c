"""``conveyor local`` as an operator runs it: a real process, real HTTP on loopback ports, the operator command
against it, a clean stop on SIGTERM, and a second stack bootstrapping against the first one's emulator."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.forge import StandInForge
from tests.gitserver import GitServer, Repository
from tests.peers import FtpServer
from tests.support import unique

CONVEYOR = Path(sys.executable).with_name("conveyor")
PROJECT_DIR = Path(__file__).resolve().parents[2]
READY_SECONDS = 30
FINAL = ("success", "failed", "cancelled")
STOP_SECONDS = 10
KNOWN_KEY = f"e2e-{uuid.uuid4().hex}"
ACCESS_LOG_LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/1\.[01]" \d{3}')
BANNER = re.compile(
    r"Conveyor is serving on (?P<api_url>\S+)\n"
    r"API key \((?P<email>\S+), account (?P<account>\S+)\): (?P<key>\S+)\n"
    r"AWS endpoint: (?P<aws_endpoint>\S+)\n"
)


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on now (all held open together, so they differ)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for each in sockets:
            each.bind(("127.0.0.1", 0))
        return [each.getsockname()[1] for each in sockets]
    finally:
        for each in sockets:
            each.close()


def child_environment(**overrides: str | None) -> dict[str, str]:
    """This process's environment without its emulator or stack settings, plus ``overrides`` (None removes)."""
    environment = dict(os.environ)
    for name in (
        "AWS_ENDPOINT_URL",
        "CONVEYOR_API_KEY",
        "CONVEYOR_ACCOUNT",
        "CONVEYOR_ADMIN_EMAIL",
        "PORT",
        "EMULATOR_PORT",
    ):
        environment.pop(name, None)
    environment["CONVEYOR_STATE_DIR"] = "none"  # a test's stack keeps nothing, unless the test gives it a folder
    for name, value in overrides.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


@dataclass
class LocalStack:
    """One ``conveyor local`` process and what it printed."""

    process: subprocess.Popen[bytes]
    port: int
    emulator_port: int
    stdout_path: Path
    stderr_path: Path
    executor: str = "sandbox"  # where its jobs run: "sandbox" or "container" (CONVEYOR_CONTAINERS)

    @classmethod
    def start(
        cls, logs: Path, api_key: str | None = None, aws_endpoint: str | None = None, **settings: str
    ) -> LocalStack:
        """Start a stack on free ports; with ``aws_endpoint`` it uses that emulator instead of its own."""
        port, emulator_port = free_ports(2)
        logs.mkdir(parents=True, exist_ok=True)
        stdout_path, stderr_path = logs / f"stack-{port}.out", logs / f"stack-{port}.err"
        environment = child_environment(
            PORT=str(port),
            EMULATOR_PORT=str(emulator_port),
            CONVEYOR_API_KEY=api_key,
            AWS_ENDPOINT_URL=aws_endpoint,
            **settings,
        )
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                [str(CONVEYOR), "local"], env=environment, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL
            )
        return cls(process, port, emulator_port, stdout_path, stderr_path)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    @property
    def banner(self) -> dict[str, str]:
        found = BANNER.search(self.stdout)
        assert found, f"no banner in the stack's output:\n{self.stdout}\n{self.stderr}"
        return found.groupdict()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def key(self) -> str:
        return self.banner["key"]

    @property
    def aws_endpoint(self) -> str:
        return self.banner["aws_endpoint"]

    def wait_until_ready(self, seconds: float = READY_SECONDS) -> LocalStack:
        """Poll /api/health (and wait for the banner) until both answer, or fail with what the stack printed."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"conveyor local exited with {self.process.returncode}:\n{self.stdout}\n{self.stderr}")
            try:
                healthy = requests.get(f"{self.base_url}/api/health", timeout=2).status_code == 200
            except requests.ConnectionError:
                healthy = False
            if healthy and "Press Ctrl-C to stop." in self.stdout:
                return self
            time.sleep(0.1)
        pytest.fail(f"conveyor local was not ready within {seconds} s:\n{self.stdout}\n{self.stderr}")

    def get(self, path: str, key: str | None = None) -> requests.Response:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        return requests.get(f"{self.base_url}{path}", headers=headers, timeout=10)

    def stop(self, seconds: float = STOP_SECONDS) -> int | None:
        """SIGTERM, and SIGKILL if it has not exited after ``seconds``; the exit code, or None if it was killed."""
        if self.process.poll() is not None:
            return self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=seconds)
            return None


def conveyor(stack: LocalStack, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The operator command, pointed at the stack's emulator."""
    return subprocess.run(
        [str(CONVEYOR), *arguments],
        env=child_environment(AWS_ENDPOINT_URL=stack.aws_endpoint),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def role_names(reply: requests.Response) -> list[str]:
    return [role["name"] for role in reply.json()]


def owners(users: list[dict[str, Any]]) -> list[str]:
    return [user["email"] for user in users if user["isOwner"]]


def port_is_free(port: int) -> bool:
    """Nothing listens on the port: connecting is refused, and a new listener may bind it."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do, past TIME_WAIT
        try:
            listener.bind(("127.0.0.1", port))
            listener.listen()
        except OSError:
            return False
    return True


def finished(
    stack: LocalStack, path: str, field: str, seconds: float = 60, statuses: tuple[str, ...] = FINAL
) -> dict[str, Any]:
    """``GET path``'s ``field`` once its status is final, or one of ``statuses`` (or the time is up)."""
    deadline = time.monotonic() + seconds
    while True:
        found: dict[str, Any] = stack.get(path, stack.key).json()[field]
        if found["status"] in statuses or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def wait_for_output(stack: LocalStack, text: str, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while text not in stack.stdout + stack.stderr:
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} never appeared in:\n{stack.stdout}\n{stack.stderr}")
        time.sleep(0.05)


def test_banner_names_the_api_the_configured_key_and_the_emulator(stack: LocalStack) -> None:
    assert stack.banner == {
        "api_url": f"http://127.0.0.1:{stack.port}/api",
        "email": "admin@localhost",
        "account": "local",
        "key": KNOWN_KEY,
        "aws_endpoint": f"http://127.0.0.1:{stack.emulator_port}",
    }


def test_roles_with_the_printed_key_lists_administrator_and_user(stack: LocalStack) -> None:
    reply = stack.get("/api/roles", stack.key)

    assert reply.status_code == 200
    assert role_names(reply) == ["Administrator", "User"]


def test_roles_without_a_key_is_refused_with_401(stack: LocalStack) -> None:
    reply = stack.get("/api/roles")

    assert reply.status_code == 401
    assert reply.json() == {"message": "Authorization required"}


def test_roles_with_an_unknown_key_is_refused_with_401(stack: LocalStack) -> None:
    assert stack.get("/api/roles", f"unknown-{uuid.uuid4().hex}").status_code == 401


def test_stack_prints_its_banner_once_and_no_line_per_request(stack: LocalStack) -> None:
    stack.get("/api/roles", stack.key)
    stack.get("/api/users", stack.key)
    stack.get("/api/roles")
    assert conveyor(stack, "create-api-key", "--account", "local", "--email", "admin@localhost").returncode == 0
    requests.post(f"{stack.base_url}/api/projects", json={}, timeout=10)  # refused: a client's error, not the stack's

    stdout, stderr = stack.stdout, stack.stderr
    assert stdout.count("Conveyor is serving on") == 1
    assert [line.split(" ")[0] for line in stdout.splitlines()] == [
        "Conveyor",
        "API",
        "AWS",
        "Dashboard:",
        "State:",
        "Press",
    ]
    assert ACCESS_LOG_LINE.findall(stdout + stderr) == []
    assert "Traceback" not in stderr


def test_a_client_that_hangs_up_mid_request_leaves_no_traceback(stack: LocalStack) -> None:
    for _ in range(5):  # each connection is reset (RST) as soon as its request is sent
        with socket.create_connection(("127.0.0.1", stack.port)) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.sendall(
                b"GET /api/roles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + stack.key.encode() + b"\r\n\r\n"
            )
    assert stack.get("/api/roles", stack.key).status_code == 200  # the stack still answers

    assert "Traceback" not in stack.stderr
    assert "BrokenPipeError" not in stack.stderr and "ConnectionResetError" not in stack.stderr


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PATCH", "QUERY"])
def test_a_method_no_route_has_is_refused_with_405_in_the_api_error_shape(stack: LocalStack, method: str) -> None:
    reply = requests.request(method, f"{stack.base_url}/api/health", timeout=10)

    assert reply.status_code == 405, reply.text
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.json()["message"]


def test_create_account_prints_a_key_that_works_against_the_running_api(stack: LocalStack) -> None:
    name = unique("cli")
    email = f"owner@{name}.example"

    created = conveyor(stack, "create-account", "--name", name, "--admin-email", email)

    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key and "\n" not in key
    roles = stack.get("/api/roles", key)
    assert roles.status_code == 200
    assert role_names(roles) == ["Administrator", "User"]
    assert owners(stack.get("/api/users", key).json()) == [email]


def test_create_api_key_for_the_local_admin_prints_a_key_that_works(stack: LocalStack) -> None:
    created = conveyor(stack, "create-api-key", "--account", "local", "--email", "admin@localhost")

    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key != stack.key
    assert stack.get("/api/roles", key).status_code == 200
    assert stack.get("/api/roles", stack.key).status_code == 200  # the first key still works


def test_user_level_key_works_under_the_account_prefix_and_not_without_it(stack: LocalStack) -> None:
    key = f"v2.{uuid.uuid4().hex}"

    created = conveyor(stack, "create-api-key", "--account", "local", "--email", "admin@localhost", "--api-key", key)

    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == key
    under_prefix = stack.get("/api/account/local/roles", key)
    assert under_prefix.status_code == 200
    assert role_names(under_prefix) == ["Administrator", "User"]
    without_prefix = stack.get("/api/roles", key)
    assert without_prefix.status_code == 400
    assert without_prefix.json()["message"]


def test_create_account_with_a_taken_name_fails_and_says_why(stack: LocalStack) -> None:
    refused = conveyor(stack, "create-account", "--name", "local", "--admin-email", "someone@else.example")

    assert refused.returncode != 0
    assert refused.stdout == ""
    assert "already exists" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert owners(stack.get("/api/users", stack.key).json()) == ["admin@localhost"]


def test_create_api_key_for_an_unknown_email_fails_and_says_why(stack: LocalStack) -> None:
    refused = conveyor(stack, "create-api-key", "--account", "local", "--email", "nobody@nowhere.example")

    assert refused.returncode != 0
    assert refused.stdout == ""
    assert "nobody@nowhere.example" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_second_stack_on_the_same_emulator_reuses_the_account_and_key(stack: LocalStack, tmp_path: Path) -> None:
    second = LocalStack.start(tmp_path, api_key=KNOWN_KEY, aws_endpoint=stack.aws_endpoint)
    try:
        second.wait_until_ready()

        assert second.key == KNOWN_KEY
        assert second.aws_endpoint == stack.aws_endpoint
        for either in (stack, second):
            assert either.get("/api/roles", KNOWN_KEY).status_code == 200
            assert owners(either.get("/api/users", KNOWN_KEY).json()) == ["admin@localhost"]
    finally:
        assert second.stop() == 0, second.stderr
    assert stack.get("/api/roles", KNOWN_KEY).status_code == 200  # the first stack's emulator outlived the second


def test_stack_without_a_configured_key_prints_a_new_one_that_works(tmp_path: Path) -> None:
    local = LocalStack.start(tmp_path)
    try:
        local.wait_until_ready()

        assert local.key
        assert local.banner["account"] == "local"
        assert local.get("/api/roles", local.key).status_code == 200
    finally:
        local.stop()


def test_sigterm_stops_the_stack_and_frees_both_ports(tmp_path: Path) -> None:
    local = LocalStack.start(tmp_path)
    try:
        local.wait_until_ready()
        assert not port_is_free(local.port)
        assert not port_is_free(local.emulator_port)

        local.process.send_signal(signal.SIGTERM)
        exit_code = local.process.wait(timeout=STOP_SECONDS)
    finally:
        local.stop()

    assert exit_code == 0, local.stderr
    assert "Conveyor stopped." in local.stderr
    assert port_is_free(local.port)
    assert port_is_free(local.emulator_port)


def test_build_started_over_http_runs_to_success_and_its_log_shows_the_output(
    stack: LocalStack, tmp_path: Path
) -> None:
    headers = {"Authorization": f"Bearer {stack.key}"}
    with GitServer(tmp_path) as server:
        repository = Repository.create(tmp_path, "hello.git")
        repository.commit({"appveyor.yml": "build_script:\n  - echo hello from $APPVEYOR_REPO_BRANCH\n"})
        added = requests.post(
            f"{stack.base_url}/api/projects",
            json={"repositoryProvider": "git", "repositoryName": server.url_of("hello.git")},
            headers=headers,
            timeout=10,
        )
        assert added.status_code == 200, added.text
        started = requests.post(
            f"{stack.base_url}/api/builds",
            json={"accountName": "local", "projectSlug": added.json()["slug"]},
            headers=headers,
            timeout=30,
        )
        assert started.status_code == 200, started.text
        version = started.json()["version"]

        build = finished(stack, f"/api/projects/local/{added.json()['slug']}/build/{version}", "build")

    assert build["status"] == "success", (build, stack.stderr)
    log = stack.get(f"/api/buildjobs/{build['jobs'][0]['jobId']}/log", stack.key)
    assert log.status_code == 200
    assert "hello from master" in log.text


def test_deployment_of_a_built_project_to_an_ftp_server_delivers_its_artifact(
    stack: LocalStack, tmp_path: Path
) -> None:
    headers = {"Authorization": f"Bearer {stack.key}"}
    (tmp_path / "ftp").mkdir()
    with GitServer(tmp_path) as server, FtpServer(tmp_path / "ftp") as ftp:
        repository = Repository.create(tmp_path, "site.git")
        yml = "build_script:\n  - echo shipped > index.html\nartifacts:\n  - path: index.html\n"
        repository.commit({"appveyor.yml": yml})
        slug = requests.post(
            f"{stack.base_url}/api/projects",
            json={"repositoryProvider": "git", "repositoryName": server.url_of("site.git")},
            headers=headers,
            timeout=10,
        ).json()["slug"]
        version = requests.post(
            f"{stack.base_url}/api/builds",
            json={"accountName": "local", "projectSlug": slug},
            headers=headers,
            timeout=30,
        ).json()["version"]
        assert finished(stack, f"/api/projects/local/{slug}/build/{version}", "build")["status"] == "success"
        settings = {"server": f"{ftp.host}:{ftp.port}", "username": ftp.username, "folder": "www"}
        environment = {
            "name": unique("ftp"),
            "provider": "FTP",
            "settings": {
                "providerSettings": [
                    {"name": k, "value": {"isEncrypted": False, "value": v}} for k, v in settings.items()
                ]
                + [{"name": "password", "value": {"isEncrypted": True, "value": ftp.password}}],
                "environmentVariables": [],
            },
        }
        added = requests.post(f"{stack.base_url}/api/environments", json=environment, headers=headers, timeout=10)
        assert added.status_code == 200, added.text
        started = requests.post(
            f"{stack.base_url}/api/deployments",
            json={
                "environmentName": environment["name"],
                "accountName": "local",
                "projectSlug": slug,
                "buildVersion": version,
            },
            headers=headers,
            timeout=10,
        )
        assert started.status_code == 200, started.text
        deployment = finished(stack, f"/api/deployments/{started.json()['deploymentId']}", "deployment")

    assert deployment["status"] == "success", (deployment, stack.stderr)
    assert (tmp_path / "ftp" / "www" / "index.html").read_text() == "shipped\n"


def test_a_stack_killed_and_restarted_on_an_external_endpoint_loses_nothing_and_runs_what_was_queued(
    aws_endpoint: str, tmp_path: Path
) -> None:
    one_job_at_a_time = {
        "CONVEYOR_WORKERS": "1",
        "CONVEYOR_JOB_LEASE_SECONDS": "2",
        "CONVEYOR_HEARTBEAT_SECONDS": "0.5",
    }
    # the first build is still sleeping when its stack is killed (its log shows "started" only at a flush, 2 s on)
    script = "build_script:\n  - echo started $APPVEYOR_BUILD_VERSION\n  - sleep $NAP\n"
    with GitServer(tmp_path) as server:
        Repository.create(tmp_path, "slow.git").commit({"appveyor.yml": script})
        first = LocalStack.start(tmp_path / "first", KNOWN_KEY, aws_endpoint, **one_job_at_a_time).wait_until_ready()
        try:
            api = requests.Session()
            api.headers["Authorization"] = f"Bearer {KNOWN_KEY}"
            slug = api.post(
                f"{first.base_url}/api/projects",
                json={"repositoryProvider": "git", "repositoryName": server.url_of("slow.git")},
                timeout=10,
            ).json()["slug"]
            versions = [
                api.post(
                    f"{first.base_url}/api/builds",
                    json={"accountName": "local", "projectSlug": slug, "environmentVariables": {"NAP": nap}},
                    timeout=30,
                ).json()["version"]
                for nap in ("60", "1", "1")
            ]
            running = finished(first, f"/api/projects/local/{slug}/build/{versions[0]}", "build", statuses=("running",))
            job_id = running["jobs"][0]["jobId"]
            deadline = time.monotonic() + 30
            while f"started {versions[0]}" not in first.get(f"/api/buildjobs/{job_id}/log", KNOWN_KEY).text:
                assert time.monotonic() < deadline, "the first build never printed"
                time.sleep(0.2)
        finally:
            first.process.kill()  # no clean stop: the first build's job dies mid-run, the others still wait
            first.process.wait(timeout=STOP_SECONDS)
        time.sleep(2.5)  # its lease runs out while no stack is up

        second = LocalStack.start(tmp_path / "second", KNOWN_KEY, aws_endpoint, **one_job_at_a_time).wait_until_ready()
        try:
            builds = [finished(second, f"/api/projects/local/{slug}/build/{v}", "build") for v in versions]
            killed_log = second.get(f"/api/buildjobs/{job_id}/log", KNOWN_KEY).text
        finally:
            second.stop()

    assert [build["status"] for build in builds] == ["failed", "success", "success"], second.stderr
    assert f"started {versions[0]}" in killed_log


def test_a_commit_status_from_the_local_stack_links_to_the_build_on_the_stack(tmp_path: Path) -> None:
    token = "forge-token-0123456789"
    with StandInForge(tmp_path / "forge", credentials=("x-access-token", token)) as forge:
        name = f"octo/{unique('app')}"
        sha = Repository.create(forge.root, f"{name}.git").commit({"appveyor.yml": "build_script:\n  - echo built\n"})
        local = LocalStack.start(tmp_path / "stack", KNOWN_KEY, CONVEYOR_GITHUB_URL=forge.url).wait_until_ready()
        try:
            api = requests.Session()
            api.headers["Authorization"] = f"Bearer {KNOWN_KEY}"
            project = api.post(
                f"{local.base_url}/api/projects",
                json={
                    "repositoryProvider": "gitHub",
                    "repositoryName": name,
                    "repositoryAuthentication": "credentials",
                    "repositoryPassword": token,
                },
                timeout=10,
            ).json()
            version = api.post(
                f"{local.base_url}/api/builds",
                json={"accountName": "local", "projectSlug": project["slug"]},
                timeout=30,
            ).json()["version"]
            assert (
                finished(local, f"/api/projects/local/{project['slug']}/build/{version}", "build")["status"]
                == "success"
            )
            deadline = time.monotonic() + 30
            while not any(post.json.get("state") == "success" for post in forge.posts):
                assert time.monotonic() < deadline, [post.json for post in forge.posts]
                time.sleep(0.1)
        finally:
            local.stop()

    links = {post.json.get("target_url") for post in forge.posts if post.path.endswith(f"/statuses/{sha}")}
    assert links == {f"{local.base_url}/#/projects/local/{project['slug']}/build/{version}"}


def test_a_repository_outside_what_a_build_sees_is_refused_saying_where_to_put_it(
    stack: LocalStack, tmp_path: Path
) -> None:
    repository = Repository.create(tmp_path, "mine.git")  # under /tmp, which a build's sandbox does not see
    repository.commit({"appveyor.yml": "build_script:\n  - echo built\n"})
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {stack.key}"

    reply = api.post(
        f"{stack.base_url}/api/projects",
        json={"repositoryProvider": "git", "repositoryName": str(repository.path)},
        timeout=10,
    )

    assert reply.status_code == 400, reply.text
    message = reply.json()["message"]
    assert f"Builds cannot read {repository.path}" in message and "/tmp" in message
    assert str(PROJECT_DIR / "out") in message
    assert "mine" not in [project["slug"] for project in api.get(f"{stack.base_url}/api/projects", timeout=10).json()]


def test_a_stopped_and_restarted_stack_still_has_its_projects_builds_logs_artifacts_and_secrets(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    yml = (
        "build_script:\n  - echo kept > kept.txt\n  - echo the log line\n"
        '  - if [ "$TOKEN" = "s3cret" ]; then echo the secret decrypts; fi\n'
        "artifacts:\n  - path: kept.txt\n"
    )
    with GitServer(tmp_path) as server:
        Repository.create(tmp_path, "kept.git").commit({"appveyor.yml": yml})
        first = LocalStack.start(tmp_path / "first", KNOWN_KEY, CONVEYOR_STATE_DIR=str(state)).wait_until_ready()
        try:
            api = requests.Session()
            api.headers["Authorization"] = f"Bearer {KNOWN_KEY}"
            slug = api.post(
                f"{first.base_url}/api/projects",
                json={"repositoryProvider": "git", "repositoryName": server.url_of("kept.git")},
                timeout=10,
            ).json()["slug"]
            secret = [{"name": "TOKEN", "value": {"isEncrypted": True, "value": "s3cret"}}]
            put = api.put(
                f"{first.base_url}/api/projects/local/{slug}/settings/environment-variables", json=secret, timeout=10
            )
            assert put.status_code == 204, put.text
            version = api.post(
                f"{first.base_url}/api/builds", json={"accountName": "local", "projectSlug": slug}, timeout=30
            ).json()["version"]
            built = finished(first, f"/api/projects/local/{slug}/build/{version}", "build")
            assert built["status"] == "success", first.stderr
        finally:
            assert first.stop() == 0, first.stderr
        assert f"State: kept in {state} (nothing kept yet)" in first.stdout

        second = LocalStack.start(tmp_path / "second", KNOWN_KEY, CONVEYOR_STATE_DIR=str(state)).wait_until_ready()
        try:
            project = second.get(f"/api/projects/local/{slug}", KNOWN_KEY)
            build = second.get(f"/api/projects/local/{slug}/build/{version}", KNOWN_KEY)
            job_id = built["jobs"][0]["jobId"]
            log = second.get(f"/api/buildjobs/{job_id}/log", KNOWN_KEY)
            artifact = requests.get(
                f"{second.base_url}/api/buildjobs/{job_id}/artifacts/kept.txt",
                headers={"Authorization": f"Bearer {KNOWN_KEY}"},
                timeout=10,
            )
            again = api.post(
                f"{second.base_url}/api/builds", json={"accountName": "local", "projectSlug": slug}, timeout=30
            )  # its secure variable still decrypts: the key that encrypted it was kept too
            rebuilt = finished(second, f"/api/projects/local/{slug}/build/{again.json()['version']}", "build")
            rebuilt_log = second.get(f"/api/buildjobs/{rebuilt['jobs'][0]['jobId']}/log", KNOWN_KEY).text
        finally:
            assert second.stop() == 0, second.stderr

    assert f"State: kept in {state} (restored); to start empty, stop the stack and delete that folder" in second.stdout
    assert project.status_code == 200 and project.json()["project"]["slug"] == slug
    assert build.status_code == 200 and build.json()["build"]["status"] == "success"
    assert "the log line" in log.text
    assert artifact.status_code == 200 and artifact.text == "kept\n"
    assert rebuilt["status"] == "success", second.stderr
    assert "the secret decrypts" in rebuilt_log
    assert (state.stat().st_mode & 0o777) == 0o700


def test_the_operator_command_finds_the_running_stack_without_its_credentials(tmp_path: Path) -> None:
    state = tmp_path / "state"
    no_credentials = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "CONVEYOR_STATE_DIR": str(state)}
    local = LocalStack.start(tmp_path, **no_credentials).wait_until_ready()  # type: ignore[arg-type]
    try:
        name = unique("second")
        created = subprocess.run(
            [str(CONVEYOR), "create-account", "--name", name, "--admin-email", f"owner@{name}.example"],
            env=child_environment(**no_credentials),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        roles = local.get("/api/roles", created.stdout.strip())
    finally:
        local.stop()

    assert "conveyor create-account" in local.stdout and str(state / "stack.json") in local.stdout
    assert created.returncode == 0, created.stderr
    assert roles.status_code == 200
    assert not (state / "stack.json").exists()  # gone with the stack


def test_a_build_cannot_read_the_stacks_state_folder_inside_the_project_folder(tmp_path: Path) -> None:
    state = PROJECT_DIR / f".conveyor-e2e-{uuid.uuid4().hex[:8]}"  # where `make run` keeps it: in the project folder
    probe = f"ls -la {state}; cat {state}/emulator.pickle {state}/stack.json | wc -c; echo probed"
    try:
        with GitServer(tmp_path) as server:
            Repository.create(tmp_path, "probe.git").commit({"appveyor.yml": f"build_script:\n  - {probe}\n"})
            local = LocalStack.start(tmp_path / "stack", KNOWN_KEY, CONVEYOR_STATE_DIR=str(state)).wait_until_ready()
            try:
                api = requests.Session()
                api.headers["Authorization"] = f"Bearer {KNOWN_KEY}"
                slug = api.post(
                    f"{local.base_url}/api/projects",
                    json={"repositoryProvider": "git", "repositoryName": server.url_of("probe.git")},
                    timeout=10,
                ).json()["slug"]
                time.sleep(1.5)  # a snapshot is written a moment after the project
                version = api.post(
                    f"{local.base_url}/api/builds", json={"accountName": "local", "projectSlug": slug}, timeout=30
                ).json()["version"]
                build = finished(local, f"/api/projects/local/{slug}/build/{version}", "build")
                log = local.get(f"/api/buildjobs/{build['jobs'][0]['jobId']}/log", KNOWN_KEY).text
            finally:
                local.stop()
        assert (state / "emulator.pickle").exists()
    finally:
        shutil.rmtree(state, ignore_errors=True)

    assert "probed" in log, log
    assert f"ls: cannot open directory '{state}'" in log
    assert "\n0\n" in log  # cat read nothing of the snapshot or the stack's credentials
