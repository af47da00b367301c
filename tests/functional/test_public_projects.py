"""Public projects (issue 22, item 5): a project made public with ``isPrivate: false`` shows its builds, history, logs
and artifacts without a key, as AppVeyor's do; everything else still needs one, and a request with a key is
answered as before. Projects are private unless made public, those stored before included.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.api.http import ACCOUNT_PREFIX
from chalicelib.domain.builds import build_lookup, job_reports
from chalicelib.domain.projects import project_lookup
from chalicelib.domain.team import visitors
from chalicelib.errors import Unauthorized
from chalicelib.local.pump import SqsPump
from chalicelib.store.models import ProjectModel
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment, deploy, named
from tests.functional.test_openapi import assert_conforms
from tests.gitserver import GitServer
from tests.support import Account, Caller, Reply, assert_names_field, new_account, project_path, unique

UNAUTHORIZED = {"message": "Authorization required"}
SECRET = "hunter2-of-the-public-project"
REPOSITORY_PASSWORD = "pw-of-the-public-project"
REPOSITORY_USERNAME = "robot-of-the-public-project"
PROJECT = "/projects/{accountName}/{projectSlug}"
# What a public project shows everyone: its reads with builds, its logs and its artifacts.
PUBLIC_READS = {
    f"GET {PROJECT}",
    f"GET {PROJECT}/branch/{{buildBranch}}",
    f"GET {PROJECT}/build/{{buildVersion}}",
    f"GET {PROJECT}/history",
    "GET /buildjobs/{jobId}/log",
    "GET /buildjobs/{jobId}/artifacts",
    *(
        f"GET {prefix}/" + "/".join(f"{{part{index}}}" for index in range(1, depth + 1))
        for prefix in (PROJECT + "/artifacts", "/buildjobs/{jobId}/artifacts")
        for depth in range(1, 5)
    ),
}
BUILD_YML = appveyor_yml(
    "build_script:",
    '  - echo "the secret is $SECRET_VALUE"',
    "  - mkdir -p out && echo made > out/app.txt",
    "artifacts:",
    "  - path: out/app.txt",
)


@dataclass
class Published:
    """A public project with a successful build, and what only its members may know."""

    account: Account
    project: BuildProject
    build: dict[str, Any]
    secrets: dict[str, str]  # what no answer without a key may hold, by what it is

    @property
    def params(self) -> dict[str, Any]:
        return {
            "accountName": self.account.name,
            "projectSlug": self.project.project["slug"],
            "buildVersion": self.build["version"],
            "buildBranch": self.build["branch"],
            "buildId": self.build["buildId"],
            "jobId": self.build["jobs"][0]["jobId"],
            "part1": "out",
            "part2": "app.txt",
        }

    def path(self, route: str) -> str:
        return route.format(**{name: "1" for name in re.findall(r"{(\w+)}", route)} | self.params)


def make_public(account: Account, path: str, private: bool = False, **fields: Any) -> None:
    """PUT the project's settings as read, with ``isPrivate`` and ``fields`` changed."""
    settings = account.api.get(f"{path}/settings").json["settings"]
    reply = account.api.put("/projects", {**settings, "isPrivate": private, **fields})
    assert reply.status == 204, reply.body


@pytest.fixture(scope="module")
def published(client: Client, git_server: GitServer, pump: SqsPump) -> Published:
    account = new_account(client)
    project = BuildProject(account, git_server, {"appveyor.yml": BUILD_YML})
    variables = [named("SECRET_VALUE", SECRET, secure=True)]
    assert account.api.put(f"{project.path}/settings/environment-variables", variables).status == 204
    build = project.run()
    assert build["status"] == "success", build
    credentials = {
        "repositoryAuthentication": "credentials",
        "repositoryUsername": REPOSITORY_USERNAME,
        "repositoryPassword": REPOSITORY_PASSWORD,
    }
    make_public(account, project.path, **credentials)
    settings = account.api.get(f"{project.path}/settings").json["settings"]
    token = account.api.get(f"{project.path}/settings/environment-variables").json[0]["value"]["value"]
    secrets = {
        "the secure variable": SECRET,
        "its token": token,
        "the repository password": REPOSITORY_PASSWORD,
        "the repository user": REPOSITORY_USERNAME,
        "the webhook id": settings["webhookId"],
        "the badge id": settings["statusBadgeId"],
        "a role's name": "Administrator",
    }
    return Published(account, project, build, secrets)


def anonymous(client: Client, prefix: str = "/api") -> Caller:
    return Caller(client, None, prefix)


def test_a_public_projects_builds_history_logs_and_artifacts_need_no_key(client: Client, published: Published) -> None:
    reader, owner, build = anonymous(client), published.account.api, published.build
    path, job = published.project.path, build["jobs"][0]["jobId"]

    last = reader.get(path)
    history = reader.get(f"{path}/history?recordsNumber=10")
    by_version = reader.get(f"{path}/build/{build['version']}")
    by_branch = reader.get(f"{path}/branch/{build['branch']}")
    log = reader.get(f"/buildjobs/{job}/log")
    artifacts = reader.get(f"/buildjobs/{job}/artifacts")

    for reply in (last, history, by_version, by_branch, log, artifacts):
        assert reply.status == 200, reply.body
    assert last.json["build"] == owner.get(path).json["build"] == by_version.json["build"] == by_branch.json["build"]
    assert last.json["project"]["isPrivate"] is False
    assert [entry["buildId"] for entry in history.json["builds"]] == [build["buildId"]]
    assert "the secret is [secure]" in log.body.decode()
    part = reader.get(f"/buildjobs/{job}/log", headers={"Range": "bytes=0-9"})
    assert part.status == 206 and part.body == log.body[:10]  # a running log is followed the same way
    assert [artifact["fileName"] for artifact in artifacts.json] == ["out/app.txt"]
    for file in (f"/buildjobs/{job}/artifacts/out/app.txt", f"{path}/artifacts/out/app.txt"):
        download = reader.get(file)
        assert download.status == 302 and download.headers["Location"], download.body
    assert_conforms(last, f"GET {PROJECT}")
    assert_conforms(log, "GET /buildjobs/{jobId}/log")


def test_under_the_account_prefix_too_but_only_its_own(client: Client, published: Published) -> None:
    name, job = published.account.name, published.build["jobs"][0]["jobId"]
    elsewhere = new_account(client).name

    own = anonymous(client, f"/api/account/{name}")
    other = anonymous(client, f"/api/account/{elsewhere}")

    assert own.get(published.project.path).status == 200
    assert own.get(f"/buildjobs/{job}/log").status == 200
    assert other.get(published.project.path).json == UNAUTHORIZED
    assert other.get(f"/buildjobs/{job}/log").json == UNAUTHORIZED


def test_nothing_else_answers_without_a_key(client: Client, published: Published) -> None:
    """Every route of the API (served under the account prefix too: the keyless ones by design are not) called
    without a key about the public project: only its public reads answer, each as its owner's key would."""
    from app import app

    routes = [
        (method, path.removeprefix("/api"))
        for path, methods in app.routes.items()
        for method in methods
        if path.startswith("/api/") and ACCOUNT_PREFIX + path.removeprefix("/api") in app.routes
    ]
    answered = set()
    for method, route in routes:
        path = published.path(route) + ("?recordsNumber=10" if route.endswith("/history") else "")
        reply = anonymous(client).call(method, path)
        if reply.status == 401:
            assert reply.json == UNAUTHORIZED, (route, reply.body)
            continue
        answered.add(f"{method} {route}")
        assert reply.status == published.account.api.call(method, path).status, (route, reply.body)

    assert answered == PUBLIC_READS


def test_no_answer_without_a_key_holds_a_secret_a_role_or_a_credential(client: Client, published: Published) -> None:
    reader = anonymous(client)
    routes = sorted(read.removeprefix("GET ") for read in PUBLIC_READS)
    bodies = {route: reader.get(published.path(route) + "?recordsNumber=10") for route in routes}

    assert all(reply.status in (200, 302, 404) for reply in bodies.values()), bodies
    for route, reply in bodies.items():
        text = reply.body.decode(errors="replace") + str(reply.headers)
        leaked = [what for what, secret in published.secrets.items() if secret in text]
        assert not leaked, f"{route} without a key shows {leaked}"
    shown = bodies[PROJECT].json["project"]
    assert shown["securityDescriptor"]["roleAces"] == []
    assert not {"repositoryAuthentication", "repositoryUsername", "sshPublicKey"} & set(shown)
    assert published.account.api.get(published.project.path).json["project"]["repositoryUsername"]  # members see it


def test_a_key_is_answered_as_before_even_on_a_public_project(client: Client, published: Published) -> None:
    path = published.project.path

    assert Caller(client, "not-a-key-of-anyone").get(path).json == UNAUTHORIZED
    assert Caller(client, None, authorization="Bearer ").get(path).json == UNAUTHORIZED
    assert new_account(client).api.get(path).status == 404  # another account's key finds nothing, as before
    assert published.account.api.get(path).status == 200


def test_a_private_or_missing_project_or_job_answers_401_without_a_key(client: Client, published: Published) -> None:
    reader, account, path = anonymous(client), published.account, published.project.path
    job = published.build["jobs"][0]["jobId"]
    missing = [
        f"/projects/{account.name}/{unique('nothing')}",
        f"/projects/{unique('nobody')}/{published.project.project['slug']}",
        f"/buildjobs/{unique('nojob')}/log",
        f"/buildjobs/{unique('nojob')}/artifacts",
    ]

    with private(published):
        hidden = [reader.get(f"{path}{tail}") for tail in ("", "/history?recordsNumber=1", "/artifacts/out/app.txt")]
        hidden += [reader.get(f"/buildjobs/{job}{tail}") for tail in ("/log", "/artifacts", "/artifacts/out/app.txt")]

    for reply in hidden + [reader.get(route) for route in missing]:
        assert (reply.status, reply.json) == (401, UNAUTHORIZED), reply.body
    assert reader.get(path).status == 200  # public again


def test_a_visitor_reads_a_public_project_without_what_only_its_members_see(published: Published) -> None:
    account, slug = published.account.name, published.project.project["slug"]
    job_id = published.build["jobs"][0]["jobId"]

    reader = visitors.of_project(account, slug, None)
    project = project_lookup.find_project(reader, account, slug)
    job, build = build_lookup.find_job(visitors.of_job(job_id, None), job_id)
    messages = job_reports.job_messages(reader, job_id)
    with private(published), pytest.raises(Unauthorized):
        visitors.of_project(account, slug, None)

    assert reader.is_visitor and reader.permissions == frozenset()
    assert (project.repository_password, project.webhook_id, project.configuration) == (None, "", {})
    assert (job.job_id, build.version, messages) == (job_id, published.build["version"], [])
    with pytest.raises(Unauthorized):
        visitors.of_project(account, slug, "another-account")  # under another account's prefix


@contextmanager
def private(published: Published) -> Iterator[None]:
    make_public(published.account, published.project.path, private=True)
    try:
        yield
    finally:
        make_public(published.account, published.project.path)


def test_a_deployment_jobs_log_needs_a_key_even_of_a_public_project(client: Client, published: Published) -> None:
    environment = add_environment(published.account, "Agent", {"agents_timeout": "60"})  # its job stays queued
    started = deploy(published.project, environment, published.build["version"])
    assert started.status == 200, started.body
    job = started.json["jobs"][0]["jobId"]

    assert anonymous(client).get(f"/buildjobs/{job}/log").json == UNAUTHORIZED
    assert published.account.api.get(f"/buildjobs/{job}/log").status == 200


def test_a_new_project_is_private_unless_it_says_otherwise(account: Account, client: Client) -> None:
    def add(**fields: Any) -> Reply:
        return account.api.post(
            "/projects", {"repositoryProvider": "gitHub", "repositoryName": f"octo/{unique('repo')}", **fields}
        )

    default, public, private_one = add().json, add(isPrivate=False).json, add(isPrivate=True).json

    assert (default["isPrivate"], public["isPrivate"], private_one["isPrivate"]) == (True, False, True)
    assert anonymous(client).get(project_path(default)).json == UNAUTHORIZED
    assert anonymous(client).get(project_path(private_one)).json == UNAUTHORIZED
    assert anonymous(client).get(project_path(public)).status == 200
    assert_names_field(add(isPrivate="no"), "isPrivate")


def test_a_settings_put_without_is_private_makes_a_public_project_private(account: Account, client: Client) -> None:
    project = account.api.post(
        "/projects", {"repositoryProvider": "gitHub", "repositoryName": f"octo/{unique('repo')}", "isPrivate": False}
    ).json
    path = project_path(project)
    settings = account.api.get(f"{path}/settings").json["settings"]

    reply = account.api.put("/projects", {name: value for name, value in settings.items() if name != "isPrivate"})

    assert reply.status == 204, reply.body
    assert account.api.get(path).json["project"]["isPrivate"] is True
    assert anonymous(client).get(path).json == UNAUTHORIZED


def test_a_project_stored_before_public_projects_stays_private(account: Account, client: Client) -> None:
    """Items the code before wrote said ``is_private: false`` of every project, and none was readable without a
    key: they read as private, and a round trip of their settings keeps them so."""
    owner, repository = "octo", unique("old")
    project = account.api.post(
        "/projects", {"repositoryProvider": "gitHub", "repositoryName": f"{owner}/{repository}", "isPrivate": False}
    ).json
    path = project_path(project)
    item = ProjectModel.get(project["accountId"], project["slug"])
    item.update(  # as the code before wrote it: no `public`, no repository key
        actions=[
            ProjectModel.is_private.set(False),
            ProjectModel.public.remove(),
            ProjectModel.public_repository.remove(),
        ]
    )

    shown = account.api.get(path).json["project"]
    without_key = anonymous(client).get(path)
    badge = anonymous(client).get(f"/projects/status/github/{owner}/{repository}")
    settings = account.api.get(f"{path}/settings").json["settings"]
    assert account.api.put("/projects", settings).status == 204

    assert shown["isPrivate"] is True and settings["isPrivate"] is True
    assert without_key.json == UNAUTHORIZED
    assert badge.status == 404 and set(badge.json) == {"message"}
    assert anonymous(client).get(path).json == UNAUTHORIZED  # after the round trip, too
    assert ProjectModel.get(project["accountId"], project["slug"]).public is None


def test_bad_input_without_a_key_is_a_4xx_in_the_error_shape(client: Client, published: Published) -> None:
    reader, path = anonymous(client), published.project.path
    odd = ["/buildjobs/%00/log", "/buildjobs/%ED%A0%80%FF/artifacts", "/projects/%00/%FF", "/projects/a/%00/history"]

    replies = [reader.get(route) for route in odd]
    replies += [reader.get(f"{path}/history?recordsNumber=lots"), reader.get(f"{path}/history")]
    replies += [reader.get(f"{path}/artifacts/out/app.txt?job=nope"), reader.get(f"/buildjobs/{'j' * 300}/log")]

    for reply in replies:
        assert 400 <= reply.status < 500, reply.body
        assert isinstance(reply.json, dict) and reply.json["message"], reply.body
    assert [reply.status for reply in replies] == [401, 401, 401, 401, 400, 400, 404, 404]
