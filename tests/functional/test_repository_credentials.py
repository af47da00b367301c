"""A private repository's credentials: set as repositoryUsername and repositoryPassword, never shown, never in a
clone URL, handed to a job's runner once, before any script runs; and projects stored with credentials in their
clone URL (before those were refused) keep building, show them nowhere, and are migrated by ``conveyor migrate``."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chalicelib.domain.migrations import migrate
from chalicelib.domain.shared import secrets
from chalicelib.local.pump import SqsPump
from chalicelib.scm.ssh import PUBLISHED_HOST_KEYS
from chalicelib.store import projects as project_store
from chalicelib.store.models import ProjectModel
from tests.builds import FINISHED, appveyor_yml
from tests.gitserver import GitServer, Repository
from tests.sshserver import GitSshServer
from tests.support import Account, member_of_role, project_path, unique

USER, TOKEN = "deploy-bot", "s3cret-clone-token"


def probe(printf: str) -> str:
    """An appveyor.yml that counts, in the scripts' environment and in .git, the text ``printf`` prints (so the
    script never spells it out), and whether the runner's memory is the scripts' to read."""
    found = f'"$(printf {printf})"'
    return appveyor_yml(
        "build_script:",
        # the runner ($PPID of a script's shell) holds the credentials: its memory is not the scripts' to read
        "  - cat /proc/$PPID/environ >/dev/null 2>&1 && echo runner-environ-readable || echo runner-environ-refused",
        "  - cat /proc/$PPID/maps >/dev/null 2>&1 && echo runner-memory-readable || echo runner-memory-refused",
        f"  - env | grep -c {found} || true",
        f"  - grep -rc {found} .git | grep -v ':0$' || echo 0",
        "  - echo built",
    )


PROBE = probe("'s3cret-clone-%s' token")


@pytest.fixture(scope="module")
def private_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with GitServer(tmp_path_factory.mktemp("private"), credentials=(USER, TOKEN)) as server:
        yield server


def private_repository(server: GitServer, files: dict[str, str] | None = None) -> str:
    name = unique("private") + ".git"
    Repository.create(server.root, name).commit(files or {"appveyor.yml": PROBE})
    return server.url_of(name)


def add_private_project(account: Account, url: str, **fields: Any) -> Any:
    body = {"repositoryProvider": "git", "repositoryName": url, **fields}
    return account.api.post("/projects", body)


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{TOKEN}@")


def everything_shown(account: Account, project: dict[str, Any]) -> str:
    """What the owner and a User-role member read of the project, as text."""
    member = member_of_role(account, "User")
    shown = []
    for caller in (account.api, member):
        for path in ("/projects", project_path(project), project_path(project) + "/settings"):
            reply = caller.get(path)
            assert reply.status == 200, reply.body
            shown.append(reply.body.decode())
    return "\n".join(shown)


def run_build(account: Account, project: dict[str, Any]) -> tuple[dict[str, Any], str]:
    reply = account.api.post("/builds", {"accountName": project["accountName"], "projectSlug": project["slug"]})
    assert reply.status == 200, reply.body
    version = reply.json["version"]
    deadline = time.monotonic() + 60
    while (build := account.api.get(f"{project_path(project)}/build/{version}").json["build"])[
        "status"
    ] not in FINISHED:
        assert time.monotonic() < deadline, build
        time.sleep(0.2)
    log = account.api.get(f"/buildjobs/{build['jobs'][0]['jobId']}/log").body.decode()
    return build, log


def test_a_clone_url_with_credentials_is_refused_naming_the_fields_to_use(
    account: Account, private_server: GitServer
) -> None:
    url = private_repository(private_server)

    reply = add_private_project(account, with_credentials(url))

    assert reply.status == 400
    assert "repositoryUsername" in reply.json["message"] and "repositoryPassword" in reply.json["message"]
    assert account.api.get("/projects").json == []


def test_a_settings_update_cannot_put_credentials_in_the_clone_url(account: Account, private_server: GitServer) -> None:
    url = private_repository(private_server)
    project = add_private_project(account, url).json
    settings = account.api.get(project_path(project) + "/settings").json["settings"]

    reply = account.api.put("/projects", {**settings, "repositoryName": with_credentials(url)})

    assert reply.status == 400 and "repositoryPassword" in reply.json["message"]
    assert TOKEN not in everything_shown(account, project)


def test_a_private_repository_builds_with_its_credentials_which_nobody_reads_back(
    account: Account, private_server: GitServer, pump: SqsPump
) -> None:
    url = private_repository(private_server)
    reply = add_private_project(
        account, url, repositoryAuthentication="credentials", repositoryUsername=USER, repositoryPassword=TOKEN
    )
    assert reply.status == 200, reply.body
    project = reply.json

    build, log = run_build(account, project)

    assert build["status"] == "success", log
    assert TOKEN not in log and log.count("\n0\n") == 2  # neither the scripts' environment nor .git holds it
    assert "\nrunner-environ-refused" in log and "\nrunner-memory-refused" in log
    assert TOKEN not in everything_shown(account, project)
    shown = account.api.get(project_path(project) + "/settings").json["project"]
    assert (shown["repositoryAuthentication"], shown["repositoryUsername"]) == ("credentials", USER)
    assert "repositoryPassword" not in shown


def test_without_the_credentials_the_private_repository_does_not_build(
    account: Account, private_server: GitServer
) -> None:
    reply = add_private_project(account, private_repository(private_server))
    assert reply.status == 200, reply.body

    started = account.api.post("/builds", {"accountName": reply.json["accountName"], "projectSlug": reply.json["slug"]})

    assert started.status == 400 and "authentication failed" in started.json["message"]


SSH_PROBE = probe("'OPENSSH %s' 'PRIVATE'")


@pytest.fixture(scope="module")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitSshServer]:
    with GitSshServer(tmp_path_factory.mktemp("ssh")) as server:
        yield server


def ssh_project(account: Account, server: GitSshServer) -> dict[str, Any]:
    name = unique("ssh") + ".git"
    Repository.create(server.root, name).commit({"appveyor.yml": SSH_PROBE})
    reply = add_private_project(account, server.url_of(name), repositoryAuthentication="ssh")
    assert reply.status == 200, reply.body
    return dict(reply.json)


def test_a_private_repository_builds_over_ssh_with_the_projects_deploy_key(
    account: Account, ssh_server: GitSshServer, pump: SqsPump
) -> None:
    project = ssh_project(account, ssh_server)
    start = {"accountName": project["accountName"], "projectSlug": project["slug"]}
    before_the_key_is_added = account.api.post("/builds", start)
    ssh_server.authorized_keys.append(project["sshPublicKey"])

    build, log = run_build(account, project)

    assert before_the_key_is_added.status == 400
    assert project["sshPublicKey"].startswith("ssh-ed25519 ") and project["repositoryAuthentication"] == "ssh"
    assert build["status"] == "success", log
    assert "OPENSSH PRIVATE" not in log and "OPENSSH PRIVATE" not in everything_shown(account, project)
    assert log.count("\n0\n") == 2  # neither the scripts' environment nor .git holds the private key
    stored = project_store.get_project(project["accountId"], project["slug"])
    assert stored is not None and stored.ssh_host_key == ssh_server.host_key_line  # learnt at the first fetch
    assert stored.ssh_private_key and "OPENSSH" not in stored.ssh_private_key


def test_an_ssh_server_whose_host_key_changed_is_refused(account: Account, ssh_server: GitSshServer) -> None:
    project = ssh_project(account, ssh_server)
    ssh_server.authorized_keys.append(project["sshPublicKey"])
    stored = project_store.get_project(project["accountId"], project["slug"])
    assert stored is not None
    another_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    project_store.save_settings(stored, replace(stored, ssh_host_key=another_key))  # as if seen before, elsewhere

    start = {"accountName": project["accountName"], "projectSlug": project["slug"]}

    refused = account.api.post("/builds", start)
    settings = account.api.get(project_path(project) + "/settings").json["settings"]
    for authentication in (None, "ssh"):  # the owner accepts the new key: it is learnt again
        assert account.api.put("/projects", {**settings, "repositoryAuthentication": authentication}).status == 204
    accepted = account.api.post("/builds", start)

    assert refused.status == 400 and "host key" in refused.json["message"] and "refused" in refused.json["message"]
    assert accepted.status == 200, accepted.body
    after = account.api.get(project_path(project) + "/settings").json["settings"]
    assert after["sshPublicKey"] == project["sshPublicKey"]  # the same deploy key


def test_the_published_host_keys_are_the_ones_the_hosts_publish() -> None:
    fingerprints = {  # SHA-256, as GitHub, GitLab and Bitbucket publish them
        "github.com": "+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU",
        "gitlab.com": "eUXGGm1YGsMAS7vkcx6JOJdOGHPem5gQp4taiCfCLB8",
        "bitbucket.org": "ybgmFkzwOSotHTHLJgHO0QN8L0xErw6vd0VhFA9m3SM",
    }

    computed = {
        host: base64.b64encode(hashlib.sha256(base64.b64decode(line.split()[1])).digest()).decode().rstrip("=")
        for host, line in PUBLISHED_HOST_KEYS.items()
    }

    assert computed == fingerprints


# After the upgrade: projects stored with credentials in their clone URL


def store_as_before(account: Account, url: str, credentials_url: str | None = None) -> dict[str, Any]:
    """A project whose repository name carries its credentials, written to the table as the code before the refusal
    wrote it."""
    reply = add_private_project(account, url)
    assert reply.status == 200, reply.body
    item = ProjectModel.get(reply.json["accountId"], reply.json["slug"])
    item.update(actions=[ProjectModel.repository_name.set(credentials_url or with_credentials(url))])
    return dict(reply.json)


def test_a_project_stored_with_credentials_in_its_url_keeps_building_and_shows_them_nowhere(
    account: Account, private_server: GitServer, pump: SqsPump
) -> None:
    url = private_repository(private_server)
    project = store_as_before(account, url)
    settings = account.api.get(project_path(project) + "/settings").json["settings"]
    saved_as_shown = account.api.put("/projects", settings)  # the name without its credentials: no change

    build, log = run_build(account, project)

    assert saved_as_shown.status == 204, saved_as_shown.body
    assert build["status"] == "success", log
    assert TOKEN not in everything_shown(account, project) and TOKEN not in log
    assert log.count("\n0\n") == 2  # nor the scripts' environment (APPVEYOR_REPO_NAME included), nor .git
    assert account.api.get(project_path(project)).json["project"]["repositoryName"] == url


def test_the_migration_moves_credentials_out_of_the_url_and_the_project_still_builds(
    account: Account, private_server: GitServer, pump: SqsPump
) -> None:
    url = private_repository(private_server)
    project = store_as_before(account, url)

    first, second = migrate(), migrate()

    stored = project_store.get_project(project["accountId"], project["slug"])
    assert stored is not None and first["repository credentials"] >= 1 and second["repository credentials"] == 0
    assert (stored.repository_name, stored.repository_authentication, stored.repository_username) == (
        url,
        "credentials",
        USER,
    )
    assert stored.repository_password and TOKEN not in stored.repository_password
    owner = secrets.project_owner(stored)
    assert secrets.decrypt(owner, "repositoryPassword", stored.repository_password) == TOKEN
    build, log = run_build(account, project)
    assert build["status"] == "success", log


def test_a_token_given_as_the_user_name_of_an_old_url_is_left_there_by_the_migration_and_still_works(
    account: Account, tmp_path: Path, pump: SqsPump
) -> None:
    with GitServer(tmp_path, credentials=(TOKEN, "")) as server:  # GitHub's https://TOKEN@github.com/... form
        url = private_repository(server)
        project = store_as_before(account, url, url.replace("http://", f"http://{TOKEN}@"))

        migrate()
        build, log = run_build(account, project)

    assert build["status"] == "success", log
    assert TOKEN not in everything_shown(account, project) and TOKEN not in log


@pytest.mark.parametrize(
    "elsewhere",
    [
        lambda url: url.replace("127.0.0.1", "127.0.0.2"),  # an Update-right member's own server, say
        lambda url: url.replace("/private-", "/victim-"),  # another repository the token reaches, on the same host
    ],
    ids=["another host", "another repository"],
)
def test_the_stored_password_does_not_follow_the_project_to_another_repository(
    account: Account, private_server: GitServer, elsewhere: Any
) -> None:
    url = private_repository(private_server)
    project = add_private_project(
        account, url, repositoryAuthentication="credentials", repositoryUsername=USER, repositoryPassword=TOKEN
    ).json
    settings = account.api.get(project_path(project) + "/settings").json["settings"]

    moved = account.api.put("/projects", {**settings, "repositoryName": elsewhere(url)})
    same = account.api.put("/projects", {**settings, "repositoryName": url.upper().replace("HTTP://", "http://")})
    resent = account.api.put(
        "/projects", {**settings, "repositoryName": elsewhere(url), "repositoryPassword": "new-t0ken"}
    )

    assert moved.status == 400 and "repositoryPassword" in moved.json["message"]
    assert same.status == 204  # the same repository, however its name is written
    assert resent.status == 204


def test_the_password_is_kept_unless_sent_and_too_short_a_one_is_refused(
    account: Account, private_server: GitServer
) -> None:
    url = private_repository(private_server)
    body = {"repositoryAuthentication": "credentials", "repositoryUsername": USER}
    project = add_private_project(account, url, **body, repositoryPassword=TOKEN).json
    settings = account.api.get(project_path(project) + "/settings").json["settings"]

    too_short = add_private_project(account, url, **body, repositoryPassword="ab")
    kept = account.api.put("/projects", {**settings, "repositoryPassword": None})
    removed_alone = account.api.put("/projects", {**settings, "repositoryPassword": ""})
    started = account.api.post("/builds", {"accountName": project["accountName"], "projectSlug": project["slug"]})
    removed = account.api.put("/projects", {**settings, "repositoryAuthentication": None})

    assert too_short.status == 400 and "repositoryPassword" in too_short.json["message"]
    assert kept.status == 204 and started.status == 200, started.body
    assert removed_alone.status == 400 and "repositoryAuthentication null" in removed_alone.json["message"]
    assert removed.status == 204
    shown = account.api.get(project_path(project) + "/settings").json["settings"]
    assert "repositoryAuthentication" not in shown and "repositoryUsername" not in shown
