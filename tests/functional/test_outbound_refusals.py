"""Where a user's URL is saved, an address the service would refuse to connect to is refused at once (400); where a
name must be resolved, the service-side git fetch refuses it before connecting (chalicelib/outbound)."""

from __future__ import annotations

import pytest

from chalicelib.scm import git
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
    with pytest.raises(git.SourceError, match="refused"):
        git.resolve(url, timeout=5)
