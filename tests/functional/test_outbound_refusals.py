"""Where a user's URL is saved, an address the service would refuse to connect to is refused at once (400); where a
name must be resolved, the service-side git fetch refuses it before connecting (chalicelib/outbound)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chalicelib.scm import git, git_remote
from tests.outbound_stubs import stubbed_resolver  # noqa: F401 (a fixture)
from tests.support import Account, add_project, project_path

METADATA_URL = "http://169.254.169.254/latest/meta-data/"


def test_a_clone_url_of_the_metadata_address_is_refused(account: Account) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": METADATA_URL})

    assert reply.status == 400
    assert "169.254.169.254 is not an address Conveyor connects to" in reply.json["message"]
    assert account.api.get("/projects").json == []


@pytest.mark.parametrize("url", ["http://2852039166/", "git://[fd00:ec2::254]/repo.git"])
def test_a_clone_url_of_the_metadata_address_in_another_spelling_is_refused_in_settings(
    account: Account, url: str
) -> None:
    project = add_project(account, "https://git.example.com/app.git", provider="git")
    settings = account.api.get(project_path(project) + "/settings").json["settings"]

    reply = account.api.put("/projects", {**settings, "repositoryName": url})

    assert reply.status == 400
    assert account.api.get(project_path(project)).json["project"]["repositoryName"] == project["repositoryName"]


def test_an_environment_whose_webhook_or_server_is_the_metadata_address_is_refused(account: Account) -> None:
    def add(provider: str, name: str, value: str) -> int:
        setting = {"name": name, "value": {"isEncrypted": False, "value": value}}
        body = {
            "name": provider,
            "provider": provider,
            "settings": {"providerSettings": [setting], "environmentVariables": []},
        }
        return account.api.post("/environments", body).status

    assert add("Webhook", "url", METADATA_URL) == 400
    assert add("FTP", "server", "169.254.169.254:21") == 400
    assert add("AzureBlob", "endpoint", "http://[::ffff:169.254.169.254]/account") == 400
    assert account.api.get("/environments").json == []


def test_a_notification_webhook_to_the_metadata_address_is_refused_in_settings(account: Account) -> None:
    project = add_project(account)
    yml = "notifications:\n  - provider: Webhook\n    url: http://169.254.169.254/latest/\n"

    reply = account.api.put(
        project_path(project) + "/settings/yaml", raw=yml.encode(), headers={"Content-Type": "text/plain"}
    )

    assert reply.status == 400
    assert "not an address Conveyor connects to" in reply.json["message"]


@pytest.mark.usefixtures("stubbed_resolver")
@pytest.mark.parametrize("url", ["http://metadata.stub.test/repo.git", "git://mixed.stub.test/repo.git"])
def test_the_service_does_not_fetch_a_repository_whose_name_resolves_to_a_refused_address(url: str) -> None:
    with pytest.raises(git_remote.SourceError, match="refused"):
        git.resolve(url, timeout=5)


class _Recorder(BaseHTTPRequestHandler):
    """Answers every GET with what the server was told to (a redirect, or 200) and records its headers."""

    def do_GET(self) -> None:  # noqa: N802 (the handler's name is http.server's)
        self.server.seen.append(dict(self.headers))  # type: ignore[attr-defined]
        location = self.server.location  # type: ignore[attr-defined]
        self.send_response(302 if location else 200)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@contextmanager
def recorder(location: str | None = None) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen, server.location = [], location  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_to_another_port_of_the_same_host_does_not_carry_the_authorization() -> None:
    from chalicelib.outbound import http

    with recorder() as target, recorder(f"http://127.0.0.1:{target.server_address[1]}/next") as first:
        url = f"http://127.0.0.1:{first.server_address[1]}/start"
        reply = http.request("GET", url, data=None, headers={"Authorization": "Bearer t0ken"}, timeout=5)

    assert reply.status_code == 200
    assert first.seen[0]["Authorization"] == "Bearer t0ken"  # the host it was meant for
    assert "Authorization" not in target.seen[0]  # another origin: another server, whatever its host name
