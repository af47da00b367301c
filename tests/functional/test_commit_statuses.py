"""Commit statuses: a private repository's build posts its state to the forge (pending, then its result) with the
project's repository credential, in each forge's own shape; a forge that fails or hangs changes nothing of the
build and leaves a warning among its messages. Against a stand-in forge (tests/forge.py) on loopback."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import WAIT_SECONDS, BuildProject, appveyor_yml
from tests.forge import StandInForge, StatusPost
from tests.support import Account, project_path, unique

TOKEN = "forge-token-0123456789"
BUILD = appveyor_yml("build_script:", "  - echo built")


@dataclass(frozen=True)
class Forge:
    """How a forge takes a status: who clones, where the status goes, its words, its fields."""

    provider: str
    clone_user: str  # the user name the forge's git server expects with the token
    given_user: str | None  # what the project sets as repositoryUsername (None: the forge's token user by default)
    owner: str
    status_path: str  # with {repo} and {sha}
    authorization: str
    pending: tuple[str, ...]  # what a queued or running build is called
    success: str
    fields: frozenset[str]


def basic(user: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{TOKEN}".encode()).decode()


FORGES = [
    Forge(
        "gitHub", "x-access-token", None, "octo", "/api/v3/repos/{repo}/statuses/{sha}", f"Bearer {TOKEN}",
        ("pending",), "success", frozenset({"state", "context", "description", "target_url"}),
    ),
    Forge(
        "gitLab", "oauth2", None, "octo/tools", "/api/v4/projects/{quoted}/statuses/{sha}", f"Bearer {TOKEN}",
        ("pending", "running"), "success", frozenset({"state", "name", "description", "ref", "target_url"}),
    ),
    Forge(
        "bitBucket", "x-token-auth", None, "octo", "/api/2.0/repositories/{repo}/commit/{sha}/statuses/build",
        f"Bearer {TOKEN}", ("INPROGRESS",), "SUCCESSFUL",
        frozenset({"key", "state", "url", "name", "description", "refname"}),
    ),
    Forge(
        "gitea", "ci-bot", "ci-bot", "octo", "/api/v1/repos/{repo}/statuses/{sha}", basic("ci-bot"),
        ("pending",), "success", frozenset({"state", "context", "description", "target_url"}),
    ),
    Forge(
        "stash", "ci-bot", "ci-bot", "OCTO", "/rest/api/latest/projects/OCTO/repos/{name}/commits/{sha}/builds",
        basic("ci-bot"), ("INPROGRESS",), "SUCCESSFUL",
        frozenset({"key", "state", "url", "name", "description", "ref", "buildNumber"}),
    ),
]  # fmt: skip


@pytest.fixture
def base_url(api_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The service's own URL, which the statuses' links point into."""
    monkeypatch.setenv("CONVEYOR_BASE_URL", api_url)
    return api_url


@contextmanager
def stand_in(forge: Forge, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInForge]:
    with StandInForge(tmp_path, credentials=(forge.clone_user, TOKEN)) as server:
        monkeypatch.setenv(f"CONVEYOR_{forge.provider.upper()}_URL", server.url)
        yield server


def private_project(account: Account, server: StandInForge, forge: Forge) -> BuildProject:
    fields = {
        "repositoryProvider": forge.provider,
        "repositoryName": f"{forge.owner}/{unique('app')}",
        "repositoryAuthentication": "credentials",
        "repositoryPassword": TOKEN,
    }
    if forge.given_user:
        fields["repositoryUsername"] = forge.given_user
    return BuildProject(account, server, {"appveyor.yml": BUILD}, hosted=fields)


def posts_until(server: StandInForge, path: str, final: str) -> list[StatusPost]:
    """The posts to ``path`` once the last of them says ``final``."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not (posts := [post for post in server.posts if post.path == path]) or posts[-1].json["state"] != final:
        assert time.monotonic() < deadline, [post.json for post in server.posts]
        time.sleep(0.1)
    return posts


@pytest.mark.parametrize("forge", FORGES, ids=[forge.provider for forge in FORGES])
def test_a_private_repositorys_build_posts_pending_then_its_result_to_its_forge(
    forge: Forge, account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with stand_in(forge, tmp_path, monkeypatch) as server:
        project = private_project(account, server, forge)

        build = project.run()

        assert build["status"] == "success"
        repository = project.project["repositoryName"]
        sha = build["commitId"]
        path = forge.status_path.format(
            repo=repository, quoted=quote(repository, safe=""), name=repository.split("/")[-1], sha=sha
        )
        posts = posts_until(server, path, forge.success)
        assert posts[0].json["state"] in forge.pending and len(posts) >= 2, [post.json for post in posts]
        for post in posts:
            assert post.method == "POST" and set(post.json) == forge.fields, post.json
            assert post.headers["authorization"] == forge.authorization
            assert post.headers["content-type"] == "application/json" and post.headers["user-agent"]
        final = posts[-1].json
        assert "succeeded" in final["description"]
        version = quote(build["version"], safe="")
        shown_at = f"{base_url}/#/projects/{project.project['accountName']}/{project.project['slug']}"
        assert (final.get("target_url") or final["url"]) == f"{shown_at}/build/{version}"
        context = final.get("context") or final.get("key") or final["name"]  # each forge's word for it
        assert context == "continuous-integration/conveyor/branch"
        if forge.provider == "gitHub":
            assert posts[0].headers["x-github-api-version"] == "2022-11-28"
        if forge.provider in ("gitLab", "bitBucket"):
            assert final.get("ref", final.get("refname")) == "master"
        # a state posted twice (GitLab refuses the second) leaves no warning: the commit shows it
        assert project.build(build["version"])["messages"] == []
        # the token went to the forge only: no answer of the service, and no log, shows it
        shown = [account.api.get(p).body for p in ("/projects", project.path, project.path + "/settings")]
        shown.append(account.api.get(f"{project_path(project.project)}/build/{build['version']}").body)
        shown.append(project.log(build["jobs"][0]["jobId"]).encode())
        assert not any(TOKEN.encode() in body for body in shown)
        assert project.project["repositoryUsername"] == forge.clone_user  # the forge's token user, shown


def build_messages(project: BuildProject, version: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + WAIT_SECONDS
    while len(messages := project.build(version)["messages"]) < count:
        assert time.monotonic() < deadline, messages
        time.sleep(0.1)
    return messages


def test_a_forge_that_answers_500_is_tried_again_and_then_leaves_a_warning_on_the_build(
    account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("chalicelib.domain.forges.commit_statuses.RETRY_DELAYS", (1,))
    forge = FORGES[0]
    with stand_in(forge, tmp_path, monkeypatch) as server:
        server.answer = 500
        project = private_project(account, server, forge)

        build = project.run()

        assert build["status"] == "success"  # the forge's failure changed nothing of the build
        [warning] = build_messages(project, build["version"], 1)  # one, whichever of its states failed
        assert warning["category"] == "warning"
        assert warning["message"] == (
            "The build's status was not posted to its commit on GitHub: GitHub answered 500 Stand-in."
        )
        deadline = time.monotonic() + WAIT_SECONDS
        while len([post for post in server.posts if post.json["state"] == "success"]) < 2:  # tried again 1 s later
            assert time.monotonic() < deadline, [post.json for post in server.posts]
            time.sleep(0.1)
        assert project.build(build["version"])["status"] == "success"


def test_a_forge_that_never_answers_is_given_up_on_and_the_build_says_so(
    account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("chalicelib.domain.forges.commit_statuses.RETRY_DELAYS", ())
    monkeypatch.setattr("chalicelib.scm.forge.TIMEOUT_SECONDS", 1.0)
    forge = FORGES[0]
    with stand_in(forge, tmp_path, monkeypatch) as server:
        server.answer = 0
        project = private_project(account, server, forge)

        build = project.run()

        assert build["status"] == "success"
        messages = build_messages(project, build["version"], 1)
        assert any(m["message"].endswith("GitHub did not answer within 1 s.") for m in messages), messages


def test_a_token_the_forge_refuses_is_not_tried_again(
    account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    forge = FORGES[0]
    with stand_in(forge, tmp_path, monkeypatch) as server:
        server.answer = 403
        project = private_project(account, server, forge)

        build = project.run()

        posts_until(server, server.posts[0].path, "success")  # the build's last message is handled
        [warning] = build_messages(project, build["version"], 1)
        assert "403" in warning["message"] and "repo:status" in warning["message"]
        assert len(server.posts) <= 3  # queued, running, finished: each posted once, none tried again


def test_a_public_repositorys_build_posts_nothing(
    account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StandInForge(tmp_path, credentials=None) as server:
        monkeypatch.setenv("CONVEYOR_GITHUB_URL", server.url)
        hosted = {"repositoryProvider": "gitHub", "repositoryName": f"octo/{unique('open')}"}
        project = BuildProject(account, server, {"appveyor.yml": BUILD}, hosted=hosted)

        build = project.run()

        assert build["status"] == "success" and build["messages"] == []
        time.sleep(2)  # a post would have been made by now: the build's announcement is handled within a second
        assert server.posts == []


def test_a_pull_requests_merge_build_posts_on_the_head_commit_in_the_pr_context(
    account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    forge = FORGES[0]
    with stand_in(forge, tmp_path, monkeypatch) as server:
        project = private_project(account, server, forge)
        head = project.repository.commit({"appveyor.yml": BUILD, "pr.txt": "pr"}, branch="feature")
        merge = project.repository.commit(
            {"appveyor.yml": BUILD, "pr.txt": "pr"}, branch="merge", parent_from="master", merged=head
        )
        project.repository.set_ref("refs/pull/3/head", head)
        project.repository.set_ref("refs/pull/3/merge", merge)

        build = project.run(pullRequestId=3)

        assert (build["status"], build["commitId"]) == ("success", merge)
        repository = project.project["repositoryName"]
        posts = posts_until(server, f"/api/v3/repos/{repository}/statuses/{head}", "success")
        assert {post.json["context"] for post in posts} == {"continuous-integration/conveyor/pr"}
        assert not [post for post in server.posts if merge in post.path]  # GitHub shows the head's statuses


def test_githubs_rate_limit_is_waited_out_not_taken_for_a_bad_token(
    account: Account, pump: SqsPump, base_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("chalicelib.domain.forges.commit_statuses.RETRY_DELAYS", (1,))
    forge = FORGES[0]
    with stand_in(forge, tmp_path, monkeypatch) as server:
        server.answer, server.answer_headers = 403, {"x-ratelimit-remaining": "0"}
        project = private_project(account, server, forge)

        build = project.run()

        deadline = time.monotonic() + WAIT_SECONDS
        while len([post for post in server.posts if post.json["state"] == "success"]) < 2:  # tried again 1 s later
            assert time.monotonic() < deadline, [post.json for post in server.posts]
            time.sleep(0.1)
        [warning] = build_messages(project, build["version"], 1)
        assert warning["message"].endswith("GitHub answered 403 Stand-in.")  # no word of a bad token


def test_a_bitbucket_cloud_pull_request_cannot_be_started_by_number(account: Account) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": "bitBucket", "repositoryName": f"octo/{unique('b')}"})
    assert reply.status == 200, reply.body

    started = account.api.post(
        "/builds", {"accountName": reply.json["accountName"], "projectSlug": reply.json["slug"], "pullRequestId": 4}
    )

    assert started.status == 400 and "keeps no pull request refs" in started.json["message"]
