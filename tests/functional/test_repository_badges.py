"""The repository badge, ``/api/projects/status/{github|bitbucket}/{owner}/{repo}`` (issue 22, item 4): the status of
the one public project of that repository, found without a key; never a private project's, nor one of several.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any
from urllib.parse import quote

from chalice.test import Client

from chalicelib.local.pump import SqsPump
from chalicelib.store.badges import public_projects_of_repository
from tests.awscalls import dynamodb_calls
from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_badges import badge_id, get_badge, message
from tests.functional.test_openapi import assert_conforms
from tests.gitserver import GitServer
from tests.support import Account, Caller, Reply, new_account, project_path, unique

OPERATION = "GET /projects/status/{badgeId}/{repositoryOwner}/{repositoryName}"


def repository_badge(client: Client, provider: str, repository: str, query: str = "", **headers: str) -> Reply:
    """The badge of ``owner/repo``, asked for as a README's image is: no key."""
    owner, name = repository.split("/")
    path = f"/projects/status/{provider}/{quote(owner, safe='')}/{quote(name, safe='')}{query}"
    return Caller(client, None).get(path, headers=headers)


def add(account: Account, repository: str, provider: str = "gitHub", private: bool = False) -> dict[str, Any]:
    reply = account.api.post(
        "/projects", {"repositoryProvider": provider, "repositoryName": repository, "isPrivate": private}
    )
    assert reply.status == 200, reply.body
    return dict(reply.json)


def put_settings(account: Account, project: dict[str, Any], **fields: Any) -> None:
    settings = account.api.get(f"{project_path(project)}/settings").json["settings"]
    reply = account.api.put("/projects", {**settings, **fields})
    assert reply.status == 204, reply.body


def refused(reply: Reply) -> str:
    """A 404 in the API's error shape; its message."""
    assert reply.status == 404, reply.body
    assert reply.headers["Content-Type"] == "application/json"
    assert set(reply.json) == {"message"}
    return str(reply.json["message"])


def test_a_public_projects_repository_badge_needs_no_key_in_any_case(account: Account, client: Client) -> None:
    repository = f"Octo/{unique('Widget')}"
    add(account, repository)

    exact = repository_badge(client, "github", repository)
    shouted = repository_badge(client, "GitHub", repository.upper())

    assert message(exact) == message(shouted) == "no builds"
    assert exact.body == shouted.body
    assert_conforms(exact, OPERATION)


def test_a_bitbucket_repository_has_its_badge_and_no_other_provider_does(account: Account, client: Client) -> None:
    on_bitbucket, on_gitlab = f"team/{unique('repo')}", f"team/{unique('repo')}"
    add(account, on_bitbucket, "bitBucket")
    add(account, on_gitlab, "gitLab")

    assert message(repository_badge(client, "bitbucket", on_bitbucket)) == "no builds"
    refused(repository_badge(client, "github", on_bitbucket))  # the provider is part of the name
    assert "github and bitbucket" in refused(repository_badge(client, "gitlab", on_gitlab))
    refused(repository_badge(client, "github", on_gitlab))


def test_a_private_project_is_never_found_by_its_repository(account: Account, client: Client) -> None:
    repository, nothing = f"octo/{unique('secret')}", f"octo/{unique('nothing')}"
    project = add(account, repository, private=True)

    hidden = refused(repository_badge(client, "github", repository))
    kept_private = public_projects_of_repository("gitHub", repository, 2)
    put_settings(account, project, isPrivate=False)
    shown = message(repository_badge(client, "github", repository))
    made_public = public_projects_of_repository("gitHub", repository.upper(), 2)  # found in any case
    put_settings(account, project, isPrivate=True)

    assert shown == "no builds"
    assert (kept_private, [found.project_id for found in made_public]) == ([], [project["projectId"]])
    assert refused(repository_badge(client, "github", repository)) == hidden
    absent = refused(repository_badge(client, "github", nothing))
    assert hidden.replace(repository, "R") == absent.replace(nothing, "R")  # as if there were no project at all


def test_two_public_projects_of_one_repository_have_no_repository_badge(client: Client) -> None:
    repository = f"octo/{unique('shared')}"
    first, second = new_account(client), new_account(client)
    add(first, repository)
    doomed = add(second, repository.upper())

    several = refused(repository_badge(client, "github", repository))
    assert second.api.delete(project_path(doomed)).status == 204

    assert "Several public projects" in several
    assert message(repository_badge(client, "github", repository)) == "no builds"


def test_a_project_moved_to_another_repository_is_found_by_the_new_one_only(account: Account, client: Client) -> None:
    before, after = f"octo/{unique('before')}", f"octo/{unique('after')}"
    project = add(account, before)

    put_settings(account, project, repositoryName=after)

    refused(repository_badge(client, "github", before))
    assert message(repository_badge(client, "github", after)) == "no builds"


def test_an_owner_named_branch_and_the_badge_id_forms_share_their_routes(account: Account, client: Client) -> None:
    """``/status/{x}/branch/{y}`` is the badge id's branch form unless ``x`` names a provider."""
    repository = f"branch/{unique('repo')}"
    project = add(account, repository)
    badge = badge_id(account, project)

    assert message(repository_badge(client, "github", repository)) == "no builds"
    assert message(get_badge(client, badge)) == "no builds"
    assert message(get_badge(client, badge, "master")) == "no builds"
    assert message(get_badge(client, badge, "some/where")) == "no builds"
    refused(get_badge(client, "github"))  # a provider alone is no badge id
    refused(repository_badge(client, "github", f"branch/{unique('nothing')}"))


def test_bad_input_is_a_4xx_in_the_error_shape(account: Account, client: Client) -> None:
    repository = f"octo/{unique('repo')}"
    add(account, repository)

    too_long_text = repository_badge(client, "github", repository, "?passingText=" + "x" * 41)
    too_long_name = repository_badge(client, "github", f"{'o' * 256}/{'r' * 256}")
    too_long_segment = repository_badge(client, "github", f"octo/{'r' * 300}")
    odd = Caller(client, None).get("/projects/status/github/%C3%A9/%00%E2%98%83%ED%A0%80%FF")  # NUL, bad UTF-8
    empty_branch = repository_badge(client, "github", repository, "?branch=")

    assert too_long_text.status == 400 and "passingText" in too_long_text.json["message"]
    for reply in (too_long_name, too_long_segment, odd):
        refused(reply)
    assert message(empty_branch) == "no builds"  # no branch named: the newest build of any
    assert_conforms(too_long_text, OPERATION)
    assert_conforms(too_long_name, OPERATION)


def test_the_badge_follows_the_projects_builds_per_branch_in_one_query(
    client: Client, git_server: GitServer, pump: SqsPump
) -> None:
    account = new_account(client)
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo fine")})
    assert project.run(branch="master")["status"] == "success"
    repository = f"octo/{unique('built')}"
    # the builds stay the project's when its repository is said to be a GitHub one
    put_settings(account, project.project, repositoryType="gitHub", repositoryName=repository, isPrivate=False)

    with dynamodb_calls() as calls:
        passing = repository_badge(client, "github", repository, "?svg=true")
    plain = ElementTree.fromstring(passing.body)
    retina = ElementTree.fromstring(repository_badge(client, "github", repository, "?retina=true").body)

    assert message(passing) == "passing"
    assert calls == ["Query"]  # the project by repository carries its last build's status
    assert int(retina.get("width", "0")) == 2 * int(plain.get("width", "0"))
    assert message(repository_badge(client, "github", repository, "?branch=master&passingText=ok")) == "ok"
    assert message(repository_badge(client, "github", repository, "?branch=elsewhere")) == "no builds"
    revalidated = repository_badge(client, "github", repository, **{"If-None-Match": passing.headers["ETag"]})
    assert revalidated.status == 304
    assert_conforms(revalidated, OPERATION)
