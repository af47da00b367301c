"""Status badges: an SVG per project and per branch, read without a key by an unguessable id, for each state.

The tests before the first that asks for ``pump`` run with no queue handler, so their builds stay queued.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from typing import Any
from urllib.parse import quote

from chalice.test import Client

from chalicelib.api import badges as badge_views
from chalicelib.domain.team.accounts import create_account
from chalicelib.local.pump import SqsPump
from chalicelib.store.models import ProjectModel
from tests.awscalls import dynamodb_calls
from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_openapi import assert_conforms
from tests.gitserver import GitServer
from tests.support import Account, Caller, Reply, add_project, new_account, project_path, request_of

SVG = "{http://www.w3.org/2000/svg}"
ECHO = appveyor_yml("build_script:", "  - echo fine")
FAILING = appveyor_yml("build_script:", "  - exit 1")


def badge_id(account: Account, project: dict[str, Any]) -> str:
    reply = account.api.get(f"{project_path(project)}/settings")
    assert reply.status == 200, reply.body
    return str(reply.json["settings"]["statusBadgeId"])


def get_badge(client: Client, badge: str, branch: str | None = None, query: str = "", **headers: str) -> Reply:
    """The badge, asked for as a README's image is: no key."""
    path = f"/projects/status/{badge}" + ("" if branch is None else f"/branch/{quote(branch, safe='')}")
    return Caller(client, None).get(path + query, headers=headers)


def message(reply: Reply) -> str:
    """What the badge says (its right half), after checking it is a well-formed, cacheable SVG."""
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"] == "image/svg+xml"
    assert reply.headers["Cache-Control"] == "public, max-age=30"
    assert re.fullmatch(r'"[0-9a-f]{32}"', reply.headers["ETag"])
    root = ElementTree.fromstring(reply.body)  # raises on anything but well-formed XML
    assert root.tag == f"{SVG}svg"
    texts = [text.text for text in root.iter(f"{SVG}text")]
    assert texts[:2] == ["build", "build"] and texts[2] == texts[3]
    return str(texts[3])


def color(reply: Reply) -> str:
    rects = ElementTree.fromstring(reply.body).findall(f"{SVG}g/{SVG}rect")
    return str(rects[1].get("fill"))


def test_a_new_project_badge_says_no_builds_without_a_key(account: Account, client: Client) -> None:
    badge = badge_id(account, add_project(account))

    reply = get_badge(client, badge, query="?svg=true")

    assert message(reply) == "no builds"  # 200, not AppVeyor's 404: a README would show a broken image
    assert color(reply) == "#9f9f9f"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert message(get_badge(client, badge, "master")) == "no builds"
    drawn = badge_views.get_status_badge(request_of("GET", "/"), badgeId=badge)  # the view the route runs
    assert (drawn.status_code, drawn.body) == (200, reply.body.decode())


def test_badge_ids_are_long_random_and_stable(account: Account, other_account: Account) -> None:
    project = add_project(account)
    ids = [
        badge_id(account, project),
        badge_id(account, add_project(account)),
        badge_id(other_account, add_project(other_account)),
    ]

    assert all(re.fullmatch(r"[0-9a-f]{32}", badge) for badge in ids)
    assert len(set(ids)) == 3
    assert badge_id(account, project) == ids[0]
    assert "statusBadgeId" not in project  # only the settings show it


def test_an_unknown_or_guessed_badge_id_is_a_404_in_the_error_shape(account: Account, client: Client) -> None:
    project = add_project(account)
    badge = badge_id(account, project)
    settings = account.api.get(f"{project_path(project)}/settings").json["settings"]
    near = badge[:-1] + ("0" if badge[-1] != "0" else "1")

    for guess in (near, badge.upper(), str(project["projectId"]), project["slug"], settings["webhookId"], "x" * 300):
        reply = get_badge(client, guess)
        assert reply.status == 404, guess
        assert reply.headers["Content-Type"] == "application/json"
        assert set(reply.json) == {"message"}
    assert get_badge(client, near, "master").status == 404


def test_an_account_named_status_reads_its_projects_under_the_account_prefix(client: Client) -> None:
    key = create_account("status", "owner@status.example")
    caller = Caller(client, key, "/api/account/status")
    project = caller.post("/projects", {"repositoryProvider": "gitHub", "repositoryName": "octo/status"}).json

    assert caller.get(f"/projects/status/{project['slug']}").status == 200
    assert Caller(client, key).get(f"/projects/status/{project['slug']}").status == 404  # a badge id there


def test_a_project_from_before_badges_gets_an_id_at_its_first_settings_read(account: Account, client: Client) -> None:
    project = add_project(account)
    ProjectModel(project["accountId"], project["slug"]).update(actions=[ProjectModel.badge_id.remove()])
    before = account.api.get(f"{project_path(project)}/settings").json["settings"]

    given = before["statusBadgeId"]

    assert re.fullmatch(r"[0-9a-f]{32}", given)
    after = account.api.get(f"{project_path(project)}/settings").json["settings"]
    assert after == before  # the same id on every read, and nothing else changed
    assert message(get_badge(client, given)) == "no builds"


def test_a_queued_build_shows_queued_for_its_project_and_branch_in_at_most_two_calls(
    account: Account, client: Client, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": ECHO})
    queued = project.start()  # no pump yet: the build stays queued
    badge = badge_id(account, project.project)

    with dynamodb_calls() as project_calls:
        reply = get_badge(client, badge)
    with dynamodb_calls() as branch_calls:
        branch_reply = get_badge(client, badge, queued["branch"])

    assert message(reply) == message(branch_reply) == "queued"
    assert project_calls == ["Query"]  # the project by badge id carries its last build's status
    assert branch_calls == ["Query", "Query"]  # ... and then the branch's newest build
    assert message(get_badge(client, badge, query="?pendingText=on%20its%20way")) == "on its way"
    assert message(get_badge(client, badge, "elsewhere")) == "no builds"


def test_the_etag_makes_a_revalidation_a_304(account: Account, client: Client) -> None:
    badge = badge_id(account, add_project(account))
    etag = get_badge(client, badge).headers["ETag"]

    unchanged = get_badge(client, badge, **{"If-None-Match": f'W/"0", {etag}'})

    assert unchanged.status == 304 and unchanged.body == b""
    assert unchanged.headers["ETag"] == etag
    assert get_badge(client, badge, **{"If-None-Match": '"0"'}).status == 200
    assert get_badge(client, badge, query="?passingText=ok").headers["ETag"] == etag  # no build: nothing passes


def test_chosen_texts_are_escaped_bounded_and_retina_is_twice_the_size(account: Account, client: Client) -> None:
    badge = badge_id(account, add_project(account))
    plain = ElementTree.fromstring(get_badge(client, badge).body)

    retina = ElementTree.fromstring(get_badge(client, badge, query="?svg=true&retina=true").body)
    too_long = get_badge(client, badge, query="?failingText=" + "x" * 41)

    assert int(retina.get("width", "0")) == 2 * int(plain.get("width", "0"))
    assert too_long.status == 400 and "failingText" in too_long.json["message"]


def test_badge_responses_match_their_documented_shapes(account: Account, client: Client) -> None:
    badge = badge_id(account, add_project(account))
    operation, branch_operation = (
        "GET /projects/status/{badgeId}",
        "GET /projects/status/{badgeId}/branch/{buildBranch}",
    )

    found = get_badge(client, badge)

    assert_conforms(found, operation)
    assert_conforms(get_badge(client, badge, **{"If-None-Match": found.headers["ETag"]}), operation)  # 304
    assert_conforms(get_badge(client, badge, query="?pendingText=" + "x" * 41), operation)  # 400
    assert_conforms(get_badge(client, "no-such-badge"), operation)  # 404
    assert_conforms(get_badge(client, badge, "feature/x"), branch_operation)
    assert_conforms(get_badge(client, "no-such-badge", "main"), branch_operation)  # 404


def test_badges_follow_builds_to_passing_and_failing_per_branch(
    client: Client, git_server: GitServer, pump: SqsPump
) -> None:
    account = new_account(client)
    project = BuildProject(account, git_server, {"appveyor.yml": ECHO})
    project.repository.commit({"appveyor.yml": FAILING}, branch="feature/red")
    badge = badge_id(account, project.project)

    assert project.run(branch="master")["status"] == "success"
    assert message(passing := get_badge(client, badge)) == "passing"
    assert color(passing) == "#4c1"
    assert message(get_badge(client, badge, query="?passingText=all%20good")) == "all good"
    assert project.run(branch="feature/red")["status"] == "failed"

    assert message(failing := get_badge(client, badge)) == "failing"  # the newest build of any branch
    assert color(failing) == "#e05d44"
    assert message(get_badge(client, badge, "master")) == "passing"
    assert message(get_badge(client, badge, "feature/red")) == "failing"  # sent as feature%2Fred
    assert message(get_badge(client, badge, "feature/red", "?failingText=%3Cred%3E")) == "<red>"


def test_a_running_build_shows_running_then_cancelled(
    account: Account, client: Client, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - sleep 60")})
    badge = badge_id(account, project.project)
    queued = project.start()
    project.wait(queued["version"], {"running"})

    assert message(running := get_badge(client, badge)) == "running"
    assert color(running) == "#dfb317"
    reply = account.api.delete(f"/builds/{account.name}/{project.project['slug']}/{queued['version']}")
    assert reply.status == 204
    project.wait(queued["version"], {"cancelled"}, seconds=15)

    assert message(get_badge(client, badge)) == "cancelled"
    assert message(get_badge(client, badge, queued["branch"])) == "cancelled"
