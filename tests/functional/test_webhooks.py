"""Repository webhooks: real-shaped GitHub, GitLab, Bitbucket and generic payloads start builds, or say why not.

Each project's repository is on the local git server (hosted providers' base URLs point at it), and no runner runs:
a started build stays queued, which is what rolling builds cancel (test_rolling_builds.py runs them).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from chalicelib.api import webhooks as webhook_views
from chalicelib.domain.job_protocol import job_specs
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store import webhooks as webhook_store
from tests.builds import appveyor_yml
from tests.gitserver import GitServer, Repository
from tests.support import Account, Caller, Reply, add_project, member_of_role, project_path, request_of, unique

YML = appveyor_yml("build_script:", "  - echo hi")
HOSTED = {"gitHub": "GITHUB", "gitLab": "GITLAB", "bitBucket": "BITBUCKET", "gitea": "GITEA"}


@pytest.fixture(scope="module")
def git_server(git_server: GitServer) -> Iterator[GitServer]:
    """The shared git server, where the hosted providers' URLs point."""
    with pytest.MonkeyPatch.context() as patch:
        for name in HOSTED.values():
            patch.setenv(f"CONVEYOR_{name}_URL", git_server.url)
        yield git_server


class HookProject:
    """A project of ``provider`` whose repository the git server serves, and what its webhook is sent."""

    def __init__(self, account: Account, server: GitServer, provider: str = "gitHub", yml: str | None = YML) -> None:
        self.account = account
        name = f"{unique('owner')}/app"
        self.repository = Repository.create(server.root, f"{name}.git")
        self.head = self.repository.commit({"appveyor.yml": yml} if yml else {"README": "hi"}, message="First")
        repository = server.url_of(f"{name}.git") if provider == "git" else name
        self.project = add_project(account, repository, provider=provider)
        self.path = project_path(self.project)
        self.url = self.settings()["webhookUrl"]

    def settings(self) -> dict[str, Any]:
        reply = self.account.api.get(self.path + "/settings")
        assert reply.status == 200, reply.body
        settings: dict[str, Any] = reply.json["settings"]
        return settings

    def configure(self, **changes: Any) -> None:
        reply = self.account.api.put("/projects", {**self.settings(), **changes})
        assert reply.status == 204, reply.body

    def post(
        self, payload: Any, headers: dict[str, str] | None = None, raw: bytes | None = None, url: str | None = None
    ) -> Reply:
        """POST the payload to the project's webhook URL, with no API key."""
        parts = urlsplit(url or self.url)
        body = raw if raw is not None else json.dumps(payload).encode()
        return Caller(self.account.client, None, prefix="").post(
            f"{parts.path}?{parts.query}", raw=body, headers=headers or {}
        )

    def builds(self) -> list[dict[str, Any]]:
        reply = self.account.api.get(self.path + "/history?recordsNumber=50")
        assert reply.status == 200, reply.body
        builds: list[dict[str, Any]] = reply.json["builds"]
        return builds


def started(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200, reply.body
    assert "buildId" in reply.json, reply.json
    build: dict[str, Any] = reply.json
    return build


def skipped(reply: Reply) -> str:
    assert reply.status == 200, reply.body
    assert set(reply.json) == {"message"}, reply.json
    message: str = reply.json["message"]
    return message


def signed(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# Payloads, shaped as the providers send them (trimmed of fields nothing reads).


def github_push(
    ref: str, sha: str, message: str = "A change", files: list[str] | None = None, deleted: bool = False
) -> dict[str, Any]:
    author = {"name": "Ada Lovelace", "email": "ada@example.com", "username": "ada"}
    head = {
        "id": sha,
        "tree_id": "0" * 40,
        "distinct": True,
        "message": message,
        "timestamp": "2024-05-01T10:00:00Z",
        "author": author,
        "committer": author,
        "added": files or [],
        "removed": [],
        "modified": [],
    }
    return {
        "ref": ref,
        "before": "1" * 40,
        "after": "0" * 40 if deleted else sha,
        "created": False,
        "deleted": deleted,
        "forced": False,
        "base_ref": None,
        "compare": "https://github.com/o/r/compare",
        "commits": [] if deleted else [head],
        "head_commit": None if deleted else head,
        "repository": {"id": 1, "name": "app", "full_name": "owner/app"},
        "pusher": {"name": "ada"},
        "sender": {"login": "ada"},
    }


def github_pull_request(
    action: str, number: int, sha: str, head: str = "feature", base: str = "master", title: str = "Add a feature"
) -> dict[str, Any]:
    repo = {"id": 1, "full_name": "owner/app"}
    return {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "title": title,
            "head": {"ref": head, "sha": sha, "repo": repo},
            "base": {"ref": base, "sha": "2" * 40, "repo": repo},
        },
        "repository": repo,
        "sender": {"login": "ada"},
    }


def github_headers(event: str, delivery: str | None = None) -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or unique("delivery"),
        "User-Agent": "GitHub-Hookshot/abc123",
        "Content-Type": "application/json",
    }


@pytest.fixture
def github(account: Account, git_server: GitServer) -> HookProject:
    return HookProject(account, git_server)


# GitHub.


def test_github_push_builds_the_last_commit_of_the_push(github: HookProject) -> None:
    sha = github.repository.commit({"appveyor.yml": YML, "a.txt": "1"}, message="Second")

    build = started(github.post(github_push("refs/heads/master", sha, "Second"), github_headers("push")))

    assert (build["commitId"], build["branch"], build["message"], build["status"]) == (
        sha,
        "master",
        "Second",
        "queued",
    )
    assert [b["buildId"] for b in github.builds()] == [build["buildId"]]
    assert github.url.split("?")[0].endswith("/api/github/webhook")
    assert "APPVEYOR_FORCED_BUILD" not in variables_of(build)  # a push, not a build started by hand
    by_hand = {"accountName": github.project["accountName"], "projectSlug": github.project["slug"]}
    assert variables_of(started(github.account.api.post("/builds", by_hand)))["APPVEYOR_FORCED_BUILD"] == "True"


def variables_of(build: dict[str, Any]) -> dict[str, str]:
    """The variables the build's first job's runner is handed."""
    stored = build_store.get_build(build["projectId"], build["buildId"])
    assert stored is not None
    job = job_store.get_jobs(stored.job_ids)[0]
    return dict(job_specs.job_spec(job)["variables"])


def test_github_push_of_a_tag_builds_the_tag(github: HookProject) -> None:
    github.repository.set_ref("refs/tags/v1.0", github.head)

    build = started(github.post(github_push("refs/tags/v1.0", github.head), github_headers("push")))

    assert (build["isTag"], build["tag"], build["commitId"]) == (True, "v1.0", github.head)


def test_github_deleted_branch_and_ping_start_nothing(github: HookProject) -> None:
    deleted = github.post(github_push("refs/heads/old", github.head, deleted=True), github_headers("push"))
    ping = github.post({"zen": "Keep it logically awesome.", "hook_id": 1}, github_headers("ping"))
    webhook_id = parse_qs(urlsplit(github.url).query)["id"][0]
    pinged = request_of("POST", "/api/github/webhook", github_headers("ping"), b'{"zen": "Hi."}', id=webhook_id)
    answered = webhook_views.receive(pinged, provider="github")  # the view of POST /api/github/webhook

    assert "deleted" in skipped(deleted)
    assert skipped(ping).startswith("ping")
    assert (answered.status_code, answered.body) == (200, {"message": skipped(ping)})
    assert github.builds() == []


def test_github_pull_request_opened_and_synchronized_build_it_closed_does_not(github: HookProject) -> None:
    first = github.repository.commit({"appveyor.yml": YML, "f.txt": "1"}, branch="feature", message="Feature")
    github.repository.set_ref("refs/pull/7/head", first)

    opened = started(github.post(github_pull_request("opened", 7, first), github_headers("pull_request")))
    second = github.repository.commit({"appveyor.yml": YML, "f.txt": "2"}, branch="feature", message="More")
    github.repository.set_ref("refs/pull/7/head", second)
    synced = started(github.post(github_pull_request("synchronize", 7, second), github_headers("pull_request")))
    closed = github.post(github_pull_request("closed", 7, second), github_headers("pull_request"))

    assert (opened["pullRequestId"], opened["pullRequestName"], opened["commitId"]) == ("7", "Add a feature", first)
    assert (synced["commitId"], synced["branch"]) == (second, "master")
    assert "closed" in skipped(closed)
    assert len(github.builds()) == 2


def test_github_pull_request_builds_its_merge_commit_while_github_keeps_one_of_its_head(github: HookProject) -> None:
    head = github.repository.commit({"appveyor.yml": YML, "f.txt": "fork"}, branch="feature", message="From a fork")
    github.repository.set_ref("refs/pull/8/head", head)
    merge = github.repository.commit(
        {"appveyor.yml": YML, "f.txt": "fork"}, branch="merge-8", parent_from="master", merged=head, message="Merge"
    )
    github.repository.set_ref("refs/pull/8/merge", merge)
    payload = github_pull_request("opened", 8, head)
    payload["pull_request"]["head"]["repo"] = {"id": 2, "full_name": "forker/app"}

    build = started(github.post(payload, github_headers("pull_request")))

    assert (build["commitId"], build["branch"], build["message"]) == (merge, "master", "Merge")
    assert build["pullRequestHeadCommitId"] == head
    assert (build["pullRequestHeadRepository"], build["pullRequestHeadBranch"]) == ("forker/app", "feature")
    variables = variables_of(build)
    assert (variables["APPVEYOR_REPO_COMMIT"], variables["APPVEYOR_REPO_BRANCH"]) == (merge, "master")
    assert variables["APPVEYOR_PULL_REQUEST_HEAD_COMMIT"] == head
    assert variables["APPVEYOR_PULL_REQUEST_HEAD_REPO_NAME"] == "forker/app"
    assert variables["APPVEYOR_PULL_REQUEST_HEAD_REPO_BRANCH"] == "feature"
    assert variables["APPVEYOR_PULL_REQUEST_NUMBER"] == "8"

    # pushed again: until GitHub merges the new head, its merge ref still merges the old one, so the head is built
    newer = github.repository.commit({"appveyor.yml": YML, "f.txt": "fork 2"}, branch="feature", message="Again")
    github.repository.set_ref("refs/pull/8/head", newer)
    synced = started(github.post(github_pull_request("synchronize", 8, newer), github_headers("pull_request")))
    assert (synced["commitId"], synced["pullRequestHeadCommitId"]) == (newer, newer)

    # the filters read the commit the developer pushed, not the forge's merge: its [skip ci] skips the build
    wip = github.repository.commit({"appveyor.yml": YML, "f.txt": "wip"}, branch="wip", message="WIP [skip ci]")
    github.repository.set_ref("refs/pull/10/head", wip)
    merged_wip = github.repository.commit(
        {"appveyor.yml": YML, "f.txt": "wip"}, branch="merge-10", parent_from="master", merged=wip, message="Merge"
    )
    github.repository.set_ref("refs/pull/10/merge", merged_wip)
    assert "skip ci" in skipped(github.post(github_pull_request("opened", 10, wip), github_headers("pull_request")))

    # a pull request that does not merge cleanly has no merge ref: its head is built
    github.repository.set_ref("refs/pull/9/head", newer)
    conflicted = started(github.post(github_pull_request("opened", 9, newer), github_headers("pull_request")))
    assert conflicted["commitId"] == newer and variables_of(conflicted)["APPVEYOR_PULL_REQUEST_HEAD_COMMIT"] == newer


def test_gitea_sends_githubs_payloads_under_headers_of_its_own(account: Account, git_server: GitServer) -> None:
    gitea = HookProject(account, git_server, provider="gitea")
    assert gitea.url.split("?")[0].endswith("/api/gitea/webhook")
    gitea.configure(webhookSecret="gitea-s3cret")
    sha = gitea.repository.commit({"appveyor.yml": YML, "a.txt": "1"}, message="Second")
    body = json.dumps(github_push("refs/heads/master", sha, "Second")).encode()
    signature = hmac.new(b"gitea-s3cret", body, hashlib.sha256).hexdigest()  # Gitea's: hex, no "sha256="
    headers = {"X-Gitea-Event": "push", "X-Gitea-Delivery": unique("delivery"), "Content-Type": "application/json"}

    pushed = started(gitea.post(None, {**headers, "X-Gitea-Signature": signature}, raw=body))
    forged = gitea.post(None, {**headers, "X-Gitea-Delivery": unique("d"), "X-Gitea-Signature": "0" * 64}, raw=body)
    again = gitea.post(None, {**headers, "X-Gitea-Signature": signature}, raw=body)

    assert (pushed["commitId"], pushed["branch"]) == (sha, "master")
    assert forged.status == 401
    assert "handled already" in skipped(again)
    gitea.repository.set_ref("refs/pull/3/head", sha)
    body = json.dumps(github_pull_request("opened", 3, sha)).encode()
    signature = hmac.new(b"gitea-s3cret", body, hashlib.sha256).hexdigest()
    pull = {**headers, "X-Gitea-Event": "pull_request", "X-Gitea-Delivery": unique("d"), "X-Gitea-Signature": signature}
    opened = started(gitea.post(None, pull, raw=body))
    assert (opened["pullRequestId"], opened["pullRequestHeadCommitId"]) == ("3", sha)


def test_github_redelivery_is_answered_but_starts_nothing_more(github: HookProject) -> None:
    delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958-" + unique("d")
    headers = github_headers("push", delivery=delivery)
    payload = github_push("refs/heads/master", github.head)

    started(github.post(payload, headers))
    again = github.post(payload, headers)

    assert "handled already" in skipped(again)
    assert len(github.builds()) == 1
    assert webhook_store.claim_delivery(github.project["projectId"], delivery) is False  # the first one's claim


def test_a_webhook_secret_is_stored_masked_and_github_deliveries_must_be_signed_with_it(github: HookProject) -> None:
    github.configure(webhookSecret="s3cret-hook")
    stored = github.settings()["webhookSecret"]
    github.configure()  # a PUT of the settings as read (the token) keeps the secret
    body = json.dumps(github_push("refs/heads/master", github.head)).encode()

    unsigned = github.post(None, github_headers("push"), raw=body)
    forged = github.post(None, {**github_headers("push"), "X-Hub-Signature-256": signed(body, "guess")}, raw=body)
    genuine = github.post(
        None, {**github_headers("push"), "X-Hub-Signature-256": signed(body, "s3cret-hook")}, raw=body
    )

    assert stored and "s3cret-hook" not in stored and github.settings()["webhookSecret"] == stored
    assert (unsigned.status, forged.status) == (401, 401)
    assert set(forged.json) == {"message"}
    started(genuine)
    assert len(github.builds()) == 1


def test_a_replayed_signed_body_with_a_new_delivery_id_starts_nothing(github: HookProject) -> None:
    github.configure(webhookSecret="s3cret-hook")
    body = json.dumps(github_push("refs/heads/master", github.head)).encode()
    signature = signed(body, "s3cret-hook")

    first = github.post(None, {**github_headers("push"), "X-Hub-Signature-256": signature}, raw=body)
    replayed = github.post(None, {**github_headers("push"), "X-Hub-Signature-256": signature}, raw=body)
    recased = github.post(None, {**github_headers("push"), "X-Hub-Signature-256": signature.upper()}, raw=body)

    started(first)
    assert "received already" in skipped(replayed)
    assert "received already" in skipped(recased)
    assert len(github.builds()) == 1


def _deny_run_build(hook: HookProject, role_id: int) -> None:
    """The project's security descriptor denies the role RunBuild (its permissions allow running builds)."""
    descriptor = hook.settings()["securityDescriptor"]
    for ace in descriptor["roleAces"]:
        if ace["roleId"] == role_id:
            ace["accessRights"] = [{"name": "RunBuild", "allowed": False}]
    hook.configure(securityDescriptor=descriptor)


def test_a_member_denied_run_build_cannot_read_the_webhook_url_to_start_builds(github: HookProject) -> None:
    account = github.account
    role = account.add_role(unique("watchers"), {"RunProjectBuild"})
    _deny_run_build(github, role["roleId"])
    member = member_of_role(account, role["name"])
    start = {"accountName": github.project["accountName"], "projectSlug": github.project["slug"], "branch": "master"}
    assert member.post("/builds", start).status == 403

    read = member.get(github.path + "/settings")

    assert read.status == 200, read.body
    assert (read.json["settings"]["webhookId"], read.json["settings"]["webhookUrl"]) == ("", "")
    assert github.settings()["webhookId"] not in read.body.decode()
    assert github.builds() == []


def test_who_may_update_the_project_reads_its_webhook_url(github: HookProject) -> None:
    role = github.account.add_role(unique("maintainers"), {"UpdateProjectSettings"})
    _deny_run_build(github, role["roleId"])  # updating settings is what counts: whoever may could set a secret
    member = member_of_role(github.account, role["name"])

    seen = member.get(github.path + "/settings").json["settings"]

    assert (seen["webhookId"], seen["webhookUrl"]) == (github.settings()["webhookId"], github.url)


def test_a_webhook_without_a_secret_builds_no_commit_the_repository_lacks(
    account: Account, git_server: GitServer
) -> None:
    """Its URL alone starts builds, but only of the repository's own commits: a made-up one is not built."""
    github = HookProject(account, git_server)
    generic = HookProject(account, git_server, provider="git")
    made_up = "c0ffee" * 6 + "beef"

    pushed = github.post(github_push("refs/heads/master", made_up), github_headers("push"))
    named = generic.post({"ref": "refs/heads/master", "commit": made_up})

    assert "Not built" in skipped(pushed) and "Not built" in skipped(named)
    assert github.builds() == [] and generic.builds() == []


def test_unknown_id_is_404_and_malformed_json_is_400(github: HookProject) -> None:
    unknown = github.post(
        github_push("refs/heads/master", github.head),
        github_headers("push"),
        url="http://host/api/github/webhook?id=nosuchhook",
    )
    malformed = github.post(None, github_headers("push"), raw=b'{"ref": ')

    assert unknown.status == 404 and "message" in unknown.json
    assert malformed.status == 400 and "message" in malformed.json
    assert github.builds() == []


# GitLab, Bitbucket, the generic git hook.


def test_gitlab_push_tag_and_merge_request_with_its_token(account: Account, git_server: GitServer) -> None:
    gitlab = HookProject(account, git_server, provider="gitLab")
    gitlab.configure(webhookSecret="lab-token")
    sha = gitlab.repository.commit({"appveyor.yml": YML, "m.txt": "1"}, branch="topic", message="Topic work")
    gitlab.repository.set_ref("refs/merge-requests/3/head", sha)
    gitlab.repository.set_ref("refs/tags/v2", gitlab.head)
    commit = {
        "id": gitlab.head,
        "message": "First\n",
        "title": "First",
        "author": {"name": "Ada", "email": "a@x"},
        "added": [],
        "modified": ["appveyor.yml"],
        "removed": [],
    }
    push = {
        "object_kind": "push",
        "event_name": "push",
        "before": "1" * 40,
        "after": gitlab.head,
        "ref": "refs/heads/master",
        "checkout_sha": gitlab.head,
        "user_username": "ada",
        "project_id": 15,
        "commits": [commit],
        "total_commits_count": 1,
    }
    tag = {**push, "object_kind": "tag_push", "event_name": "tag_push", "ref": "refs/tags/v2"}
    merge = {
        "object_kind": "merge_request",
        "event_type": "merge_request",
        "user": {"username": "ada"},
        "object_attributes": {
            "iid": 3,
            "action": "open",
            "title": "Topic",
            "source_branch": "topic",
            "target_branch": "master",
            "source_project_id": 15,
            "target_project_id": 15,
            "last_commit": {"id": sha},
        },
    }
    token = {"X-Gitlab-Token": "lab-token"}

    wrong = gitlab.post(push, {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "nope"})
    pushed = started(gitlab.post(push, {"X-Gitlab-Event": "Push Hook", **token}))
    tagged = started(gitlab.post(tag, {"X-Gitlab-Event": "Tag Push Hook", **token}))
    merged = started(gitlab.post(merge, {"X-Gitlab-Event": "Merge Request Hook", **token}))

    assert wrong.status == 401
    assert gitlab.url.split("?")[0].endswith("/api/gitlab/webhook")
    assert (pushed["branch"], pushed["commitId"]) == ("master", gitlab.head)
    assert (tagged["isTag"], tagged["tag"]) == (True, "v2")
    assert (merged["pullRequestId"], merged["commitId"], merged["branch"]) == ("3", sha, "master")


def test_bitbucket_push_and_pull_request(account: Account, git_server: GitServer) -> None:
    bitbucket = HookProject(account, git_server, provider="bitBucket")
    sha = bitbucket.repository.commit({"appveyor.yml": YML, "b.txt": "1"}, branch="fix", message="Fix it")
    repo = {"full_name": "owner/app", "type": "repository"}
    push = {
        "actor": {"nickname": "ada"},
        "repository": repo,
        "push": {
            "changes": [
                {
                    "old": {"type": "branch", "name": "fix", "target": {"hash": "1" * 40}},
                    "new": {
                        "type": "branch",
                        "name": "fix",
                        "target": {
                            "type": "commit",
                            "hash": sha,
                            "message": "Fix it\n",
                            "author": {"raw": "Ada <ada@example.com>"},
                        },
                    },
                    "created": False,
                    "closed": False,
                }
            ]
        },
    }
    pull = {
        "actor": {"nickname": "ada"},
        "repository": repo,
        "pullrequest": {
            "id": 12,
            "title": "Fix it",
            "state": "OPEN",
            "source": {"branch": {"name": "fix"}, "commit": {"hash": sha[:12]}, "repository": repo},
            "destination": {"branch": {"name": "master"}, "commit": {"hash": bitbucket.head[:12]}, "repository": repo},
        },
    }

    pushed = started(bitbucket.post(push, {"X-Event-Key": "repo:push", "X-Request-UUID": unique("u")}))
    pulled = started(bitbucket.post(pull, {"X-Event-Key": "pullrequest:created", "X-Request-UUID": unique("u")}))

    assert bitbucket.url.split("?")[0].endswith("/api/bitbucket/webhook")
    assert (pushed["branch"], pushed["commitId"]) == ("fix", sha)
    assert (pulled["pullRequestId"], pulled["commitId"]) == ("12", sha)


def test_a_bitbucket_pull_request_builds_with_its_target_branchs_configuration(
    account: Account, git_server: GitServer
) -> None:
    for_master_only = appveyor_yml("- branches:", "    only: [master]", "  build_script:", "    - echo for master")
    bitbucket = HookProject(account, git_server, provider="bitBucket")
    sha = bitbucket.repository.commit({"appveyor.yml": for_master_only}, branch="fix", message="Fix it")
    repo = {"full_name": "owner/app", "type": "repository"}
    pull = {
        "actor": {"nickname": "ada"},
        "repository": repo,
        "pullrequest": {
            "id": 13,
            "title": "Fix it",
            "state": "OPEN",
            "source": {"branch": {"name": "fix"}, "commit": {"hash": sha[:12]}, "repository": repo},
            "destination": {"branch": {"name": "master"}, "commit": {"hash": bitbucket.head[:12]}, "repository": repo},
        },
    }

    # built from its own branch (Bitbucket keeps no pull request refs), picked as its filters pick it: by target
    pulled = started(bitbucket.post(pull, {"X-Event-Key": "pullrequest:created", "X-Request-UUID": unique("u")}))

    stored = build_store.get_build(pulled["projectId"], pulled["buildId"])
    assert (pulled["pullRequestId"], pulled["commitId"]) == ("13", sha)
    assert stored is not None and "echo for master" in json.dumps(stored.configuration)


def test_generic_git_hook_builds_the_refs_head_or_the_commit_named(account: Account, git_server: GitServer) -> None:
    generic = HookProject(account, git_server, provider="git")
    second = generic.repository.commit({"appveyor.yml": YML, "c.txt": "1"}, message="Second")

    head = started(generic.post({"ref": "refs/heads/master", "repository": {"name": "app"}, "config": "junk: [1"}))
    named = started(generic.post({"ref": "refs/heads/master", "commit": generic.head}))
    missing = generic.post({"ref": "refs/heads/nosuchbranch"})

    assert generic.url.split("?")[0].endswith("/api/git/webhook")
    assert (head["commitId"], named["commitId"]) == (second, generic.head)
    assert "not found" in skipped(missing)


# Filters: from the configuration (appveyor.yml here), on webhook builds only.


@pytest.mark.parametrize(
    ("yml", "branch", "message", "reason"),
    [
        ("branches:\n  except: [gh-pages]\n", "gh-pages", "Site", "Branch 'gh-pages' is excluded by branches.except"),
        ("branches:\n  only: ['/release\\/.*/']\n", "dev", "Work", "branch 'dev' is not in branches.only"),
        ("skip_non_tags: true\n", "master", "Work", "skip_non_tags"),
        ("", "master", "Docs [skip ci]", "[skip ci] in the commit title"),
        ("skip_commits:\n  message: /chore/\n", "master", "chore: bump", "skip_commits.message"),
        ("skip_commits:\n  author: ada@example.com\n", "master", "Work", "skip_commits.author"),
        ("only_commits:\n  message: /build/\n", "master", "Work", "only_commits.message"),
    ],
)
def test_filters_skip_webhook_pushes_and_say_why(
    account: Account, git_server: GitServer, yml: str, branch: str, message: str, reason: str
) -> None:
    project = HookProject(account, git_server, yml=YML + yml)
    sha = project.repository.commit({"appveyor.yml": YML + yml}, branch=branch, message=message)

    answer = skipped(project.post(github_push(f"refs/heads/{branch}", sha, message), github_headers("push")))

    assert reason.lower() in answer.lower()
    assert project.builds() == []
    project.account.api.post(
        "/builds", {"accountName": account.name, "projectSlug": project.project["slug"], "branch": branch}
    )
    assert len(project.builds()) == 1  # an API build ignores the filters


def test_branch_filter_lets_a_matching_branch_build(account: Account, git_server: GitServer) -> None:
    yml = YML + "branches:\n  only: ['/release\\/.*/']\n"
    project = HookProject(account, git_server, yml=yml)
    sha = project.repository.commit({"appveyor.yml": yml}, branch="release/1.0", message="Release")

    assert started(project.post(github_push("refs/heads/release/1.0", sha), github_headers("push")))["branch"] == (
        "release/1.0"
    )


def test_a_catastrophic_skip_commits_pattern_answers_and_filters(account: Account, git_server: GitServer) -> None:
    # On a backtracking engine ^(a+)+$ against forty a's and a "!" never finishes: fail here, before the webhook.
    from chalicelib.domain.configuration.user_regex import compile_pattern

    assert type(compile_pattern("/^(a+)+$/")).__module__.startswith("re2")
    yml = YML + "skip_commits:\n  message: /^(a+)+$/\n"
    project = HookProject(account, git_server, yml=yml)
    near = project.repository.commit({"appveyor.yml": yml, "a.txt": "1"}, message="a" * 40 + "!")
    matching = project.repository.commit({"appveyor.yml": yml, "a.txt": "2"}, message="a" * 40)

    built = project.post(github_push("refs/heads/master", near, "a" * 40 + "!"), github_headers("push"))
    skipped_push = project.post(github_push("refs/heads/master", matching, "a" * 40), github_headers("push"))

    assert started(built)["commitId"] == near
    assert "skip_commits.message" in skipped(skipped_push)
    assert len(project.builds()) == 1


def test_a_repository_pattern_re2_cannot_run_answers_why_nothing_started(
    account: Account, git_server: GitServer
) -> None:
    yml = YML + "branches:\n  only:\n    - /(?<=release-)1/\n"
    project = HookProject(account, git_server, yml=yml)

    answer = skipped(project.post(github_push("refs/heads/master", project.head), github_headers("push")))

    assert "Not built" in answer and "/(?<=release-)1/" in answer
    assert project.builds() == []


def test_skip_tags_skips_a_tag_push(account: Account, git_server: GitServer) -> None:
    project = HookProject(account, git_server, yml=YML + "skip_tags: true\n")
    project.repository.set_ref("refs/tags/v3", project.head)

    assert "skip_tags" in skipped(project.post(github_push("refs/tags/v3", project.head), github_headers("push")))


def test_skip_commits_files_skips_a_push_touching_only_docs(account: Account, git_server: GitServer) -> None:
    yml = YML + "skip_commits:\n  files:\n    - docs/\n"
    project = HookProject(account, git_server, yml=yml)
    docs = project.repository.commit({"appveyor.yml": yml, "docs/a.md": "x"}, message="Docs")
    code = project.repository.commit({"appveyor.yml": yml, "docs/a.md": "x", "src/a.c": "y"}, message="Code")

    docs_only = project.post(github_push("refs/heads/master", docs, files=["docs/a.md"]), github_headers("push"))
    with_code = project.post(
        github_push("refs/heads/master", code, files=["docs/a.md", "src/a.c"]), github_headers("push")
    )

    assert "skip_commits.files" in skipped(docs_only)
    assert started(with_code)["commitId"] == code


def test_skip_branch_with_pr_skips_pushes_to_a_branch_with_an_open_pull_request(
    account: Account, git_server: GitServer
) -> None:
    yml = YML + "skip_branch_with_pr: true\n"
    project = HookProject(account, git_server, yml=yml)
    sha = project.repository.commit({"appveyor.yml": yml, "f": "1"}, branch="feature", message="Feature")
    project.repository.set_ref("refs/pull/4/head", sha)

    before = started(project.post(github_push("refs/heads/feature", sha), github_headers("push")))
    started(project.post(github_pull_request("opened", 4, sha), github_headers("pull_request")))
    during = project.post(github_push("refs/heads/feature", sha), github_headers("push"))
    project.post(github_pull_request("closed", 4, sha), github_headers("pull_request"))
    after = project.post(github_push("refs/heads/feature", sha), github_headers("push"))

    assert before["branch"] == "feature"
    assert "skip_branch_with_pr" in skipped(during)
    started(after)


def test_skip_branches_without_appveyor_yml(account: Account, git_server: GitServer) -> None:
    project = HookProject(account, git_server, yml=None)
    project.configure(skipBranchesWithoutServiceYml=True)
    with_yml = project.repository.commit({".appveyor.yml": YML}, branch="ci", message="CI")

    bare = project.post(github_push("refs/heads/master", project.head), github_headers("push"))
    dotted = project.post(github_push("refs/heads/ci", with_yml), github_headers("push"))

    assert "no appveyor.yml" in skipped(bare)
    assert started(dotted)["branch"] == "ci"


# Rolling builds.


def test_rolling_builds_cancel_the_branchs_queued_build_on_a_new_push(github: HookProject) -> None:
    assert github.settings()["rollingBuilds"] is False
    github.configure(rollingBuilds=True)
    other = github.repository.commit({"appveyor.yml": YML}, branch="other", message="Other")
    first = started(github.post(github_push("refs/heads/master", github.head), github_headers("push")))
    elsewhere = started(github.post(github_push("refs/heads/other", other), github_headers("push")))
    sha = github.repository.commit({"appveyor.yml": YML, "n": "1"}, message="Newer")

    second = started(github.post(github_push("refs/heads/master", sha), github_headers("push")))

    statuses = {build["buildId"]: build["status"] for build in github.builds()}
    assert github.settings()["rollingBuilds"] is True
    assert statuses == {first["buildId"]: "cancelled", elsewhere["buildId"]: "queued", second["buildId"]: "queued"}


def test_rolling_builds_cancel_nothing_for_a_push_whose_for_items_skip_every_job(github: HookProject) -> None:
    github.configure(rollingBuilds=True)
    first = started(github.post(github_push("refs/heads/master", github.head), github_headers("push")))
    not_on_master = appveyor_yml(
        "environment:",
        "  matrix:",
        "    - FLAVOR: only",
        "build_script:",
        "  - echo hi",
        "for:",
        "  - matrix:",
        "      only:",
        "        - FLAVOR: only",
        "    branches:",
        "      except: [master]",
    )
    sha = github.repository.commit({"appveyor.yml": not_on_master}, message="Not for master")

    message = skipped(github.post(github_push("refs/heads/master", sha), github_headers("push")))
    excluded = appveyor_yml(*not_on_master.splitlines()[:5], "matrix:", "  exclude:", "    - FLAVOR: only")
    empty = github.repository.commit({"appveyor.yml": excluded}, message="Every job excluded")
    nothing = skipped(github.post(github_push("refs/heads/master", empty), github_headers("push")))

    assert message.startswith("Not built: every job is skipped")
    assert nothing == "Not built: The build matrix is empty: every job is excluded."
    assert [(build["buildId"], build["status"]) for build in github.builds()] == [(first["buildId"], "queued")]


def test_without_rolling_builds_a_new_push_leaves_the_queued_build(github: HookProject) -> None:
    first = started(github.post(github_push("refs/heads/master", github.head), github_headers("push")))
    sha = github.repository.commit({"appveyor.yml": YML, "n": "1"}, message="Newer")
    started(github.post(github_push("refs/heads/master", sha), github_headers("push")))

    assert {build["buildId"]: build["status"] for build in github.builds()}[first["buildId"]] == "queued"


@pytest.mark.parametrize("provider", ["gitHub", "bitBucket", "gitLab", "gitea", "vso", "stash", "kiln", "git"])
def test_every_projects_webhook_url_is_a_route_the_service_answers(
    account: Account, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for server in ("STASH", "GITEA"):  # no public host: the operator says where the server is
        monkeypatch.setenv(f"CONVEYOR_{server}_URL", "https://code.example.com")
    repository = "https://code.example.com/team/widget.git" if provider == "git" else "team/widget"
    project = add_project(account, repository, provider=provider)
    url = account.api.get(project_path(project) + "/settings").json["settings"]["webhookUrl"]
    parts = urlsplit(url)

    reply = Caller(account.client, None, prefix="").post(f"{parts.path}?{parts.query}", raw=b"[]", headers={})

    # the hook's own answer (its body is no JSON object), not a route that does not exist
    assert (reply.status, reply.json["message"]) == (400, "The webhook body must be a JSON object."), reply.body
