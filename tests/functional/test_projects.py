"""Projects: adding one for a repository, slugs, listing, reading, deleting, the build cache, who may do what."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

import chalicelib.aws
import chalicelib.config
import chalicelib.store.blobs
from chalicelib.api import project_reads
from tests.support import (
    Account,
    Caller,
    Reply,
    add_project,
    assert_refused,
    member_of_role,
    project_path,
    unique,
    view_answer,
)

PROVIDERS = ["gitHub", "bitBucket", "vso", "gitLab", "kiln", "stash", "git", "mercurial", "subversion"]
RIGHTS = ["View", "RunBuild", "Update", "Delete"]
NOT_FOUND = "Project not found or access denied."
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,7})?\+00:00$")


def assert_not_found(reply: Reply) -> None:
    assert_refused(reply, 404)
    assert reply.json == {"message": NOT_FOUND}


def settings_of(account: Account, project: dict[str, Any], caller: Caller | None = None) -> dict[str, Any]:
    reply = (caller or account.api).get(project_path(project) + "/settings")
    assert reply.status == 200, reply.body
    return reply.json["settings"]


def listed_slugs(caller: Caller) -> list[str]:
    reply = caller.get("/projects")
    assert reply.status == 200, reply.body
    return [project["slug"] for project in reply.json]


def descriptor_restricting(settings: dict[str, Any], role_id: int, right: str, allowed: bool) -> dict[str, Any]:
    """A copy of settings whose security descriptor sets ``right`` of role ``role_id`` to ``allowed``."""
    changed = copy.deepcopy(settings)
    for ace in changed["securityDescriptor"]["roleAces"]:
        if ace["roleId"] == role_id:
            for access_right in ace["accessRights"]:
                if access_right["name"] == right:
                    access_right["allowed"] = allowed
    return changed


def ace_of(settings: dict[str, Any], role_id: int) -> dict[str, Any]:
    return next(ace for ace in settings["securityDescriptor"]["roleAces"] if ace["roleId"] == role_id)


def s3() -> Any:
    return chalicelib.aws.client("s3")


def bucket() -> str:
    return chalicelib.config.settings().bucket


def put_cache_object(project: dict[str, Any], name: str) -> str:
    key = chalicelib.store.blobs.project_cache_prefix(project["accountId"], project["projectId"]) + name
    s3().put_object(Bucket=bucket(), Key=key, Body=b"x")
    return key


def cache_keys(project: dict[str, Any]) -> list[str]:
    prefix = chalicelib.store.blobs.project_cache_prefix(project["accountId"], project["projectId"])
    listing = s3().list_objects_v2(Bucket=bucket(), Prefix=prefix)
    return sorted(entry["Key"] for entry in listing.get("Contents", []))


# Adding a project


def test_add_project_returns_the_new_project(account: Account) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": "gitHub", "repositoryName": "octo/Hello.World"})

    assert reply.status == 200, reply.body
    project = reply.json
    assert isinstance(project["projectId"], int)
    assert isinstance(project["accountId"], int)
    assert project["accountName"] == account.name
    assert project["builds"] == []
    assert project["name"] == "Hello.World"
    assert project["slug"] == "hello-world"
    assert project["repositoryType"] == "gitHub"
    assert project["repositoryScm"] == "git"
    assert project["repositoryName"] == "octo/Hello.World"
    assert project["isPrivate"] is True  # private unless the request says isPrivate: false
    assert project["skipBranchesWithoutServiceYml"] is False
    assert isinstance(project["securityDescriptor"], dict)
    assert TIMESTAMP.match(project["created"])
    assert "updated" not in project


@pytest.mark.parametrize("provider", ["gitHub", "bitBucket", "vso", "gitLab", "kiln", "stash", "gitea"])
def test_hosted_providers_take_an_owner_and_repository_name(
    account: Account, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for server in ("STASH", "GITEA"):  # no public host: the operator says where the server is
        monkeypatch.setenv(f"CONVEYOR_{server}_URL", "https://code.example.com")
    project = add_project(account, "team/widget", provider)

    assert (project["repositoryType"], project["repositoryScm"]) == (provider, "git")
    assert (project["name"], project["repositoryName"]) == ("widget", "team/widget")


@pytest.mark.parametrize("provider", ["gitHub", "bitBucket", "vso", "gitLab", "kiln", "stash"])
@pytest.mark.parametrize("repository", ["widget", "https://github.com/team/widget", "", "team/../widget"])
def test_hosted_providers_refuse_anything_but_owner_and_repository(
    account: Account, provider: str, repository: str
) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": provider, "repositoryName": repository})

    assert_refused(reply, 400)
    assert listed_slugs(account.api) == []


@pytest.mark.parametrize(
    "url",
    [
        "https://git.example.com/team/widget.git",
        "http://git.example.com/team/widget.git",
        "git://git.example.com/team/widget.git",
    ],
)
def test_git_provider_takes_a_clone_url_and_names_the_project_after_its_last_segment(
    account: Account, url: str
) -> None:
    project = add_project(account, url, "git")

    assert project["repositoryName"] == url
    assert (project["repositoryType"], project["repositoryScm"]) == ("git", "git")
    assert (project["name"], project["slug"]) == ("widget", "widget")


@pytest.mark.parametrize("repository", ["repos/widget.git", "./widget", "ftp://git.example.com/widget.git", ""])
def test_git_provider_refuses_relative_paths_and_other_schemes(account: Account, repository: str) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": repository})

    assert_refused(reply, 400)
    assert listed_slugs(account.api) == []


@pytest.mark.parametrize(
    ("provider", "url", "scm"),
    [
        ("mercurial", "https://hg.example.com/team/widget", "mercurial"),
        ("subversion", "https://svn.example.com/repos/widget", "subversion"),
    ],
)
def test_mercurial_and_subversion_projects_are_recorded_with_their_scm(
    account: Account, provider: str, url: str, scm: str
) -> None:
    project = add_project(account, url, provider)

    assert (project["repositoryType"], project["repositoryScm"], project["name"]) == (provider, scm, "widget")
    fetched = account.api.get(project_path(project)).json["project"]
    assert (fetched["repositoryType"], fetched["repositoryScm"]) == (provider, scm)


@pytest.mark.parametrize("provider", ["github", "GitHub", "svn", "", "bitbucket"])
def test_unknown_provider_is_refused_with_the_allowed_values(account: Account, provider: str) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": provider, "repositoryName": "octo/widget"})

    message = assert_refused(reply, 400)
    for allowed in PROVIDERS:
        assert allowed in message
    assert listed_slugs(account.api) == []


@pytest.mark.parametrize(
    "body",
    [
        {"repositoryName": "octo/widget"},
        {"repositoryProvider": "gitHub"},
        {"repositoryProvider": 5, "repositoryName": "octo/widget"},
        {"repositoryProvider": "gitHub", "repositoryName": ["octo/widget"]},
        {"repositoryProvider": None, "repositoryName": None},
    ],
)
def test_add_project_needs_both_fields_as_text(account: Account, body: dict[str, Any]) -> None:
    assert_refused(account.api.post("/projects", body), 400)
    assert listed_slugs(account.api) == []


# Slugs


@pytest.mark.parametrize(
    ("repository", "slug"),
    [
        ("octo/Hello.World", "hello-world"),
        ("octo/My_Great  Repo", "my-great-repo"),
        ("octo/widget", "widget"),
        ("octo/--Edge--", "edge"),
    ],
)
def test_slug_is_the_url_safe_lower_case_name(account: Account, repository: str, slug: str) -> None:
    project = add_project(account, repository)

    assert project["slug"] == slug
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", project["slug"])
    assert account.api.get(project_path(project)).status == 200


def test_projects_of_the_same_repository_get_numbered_slugs(account: Account) -> None:
    slugs = [add_project(account, "octo/widget")["slug"] for _ in range(3)]

    assert slugs == ["widget", "widget-1", "widget-2"]
    assert sorted(listed_slugs(account.api)) == ["widget", "widget-1", "widget-2"]


def test_slugs_are_per_account(account: Account, other_account: Account) -> None:
    add_project(account, "octo/widget")

    assert add_project(other_account, "octo/widget")["slug"] == "widget"


def test_slug_of_a_deleted_project_can_be_used_again(account: Account) -> None:
    first = add_project(account, "octo/widget")
    assert account.api.delete(project_path(first)).status == 204

    second = add_project(account, "octo/widget")

    assert second["slug"] == "widget"
    assert second["projectId"] != first["projectId"]


# Listing and reading


def test_list_shows_the_accounts_projects_without_builds(account: Account) -> None:
    first = add_project(account, "octo/alpha")
    second = add_project(account, "octo/beta")

    reply = account.api.get("/projects")

    assert reply.status == 200, reply.body
    by_slug = {project["slug"]: project for project in reply.json}
    assert set(by_slug) == {"alpha", "beta"}
    assert by_slug["alpha"]["projectId"] == first["projectId"]
    assert by_slug["beta"]["projectId"] == second["projectId"]
    assert all(project["builds"] == [] for project in reply.json)
    assert by_slug["alpha"]["repositoryName"] == "octo/alpha"
    assert view_answer(account, project_reads.list_projects, "/api/projects") == reply.json  # GET /projects' view


def test_new_account_lists_no_projects(account: Account) -> None:
    assert account.api.get("/projects").json == []


def test_get_project_without_builds_has_no_build_key(account: Account) -> None:
    project = add_project(account, "octo/widget")

    reply = account.api.get(project_path(project))

    assert reply.status == 200, reply.body
    assert set(reply.json) == {"project"}
    assert reply.json["project"] == project


def test_project_url_takes_the_account_name_in_any_case(account: Account) -> None:
    project = add_project(account, "octo/widget")

    reply = account.api.get(f"/projects/{account.name.upper()}/{project['slug']}")

    assert reply.status == 200, reply.body
    assert reply.json["project"]["projectId"] == project["projectId"]


@pytest.mark.parametrize("suffix", ["", "/settings", "/settings/yaml", "/settings/environment-variables"])
def test_unknown_slug_is_not_found(account: Account, suffix: str) -> None:
    add_project(account, "octo/widget")

    assert_not_found(account.api.get(f"/projects/{account.name}/no-such-project{suffix}"))


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("DELETE", "", None),
        ("DELETE", "/buildcache", None),
        ("PUT", "/settings/yaml", None),
        ("PUT", "/settings/environment-variables", []),
        ("PUT", "/settings/build-number", {"nextBuildNumber": 5}),
    ],
)
def test_changing_an_unknown_project_is_not_found(account: Account, method: str, suffix: str, body: Any) -> None:
    raw = b"install: echo hi" if suffix == "/settings/yaml" else None
    reply = account.api.call(method, f"/projects/{account.name}/no-such-project{suffix}", body, raw=raw)

    assert_not_found(reply)


# Isolation between accounts


def test_another_accounts_projects_never_appear_in_the_list(account: Account, other_account: Account) -> None:
    add_project(account, "octo/mine")
    add_project(other_account, "octo/theirs")

    assert listed_slugs(account.api) == ["mine"]
    assert listed_slugs(other_account.api) == ["theirs"]


@pytest.mark.parametrize("suffix", ["", "/settings", "/settings/yaml", "/settings/environment-variables"])
def test_another_accounts_project_is_not_found(account: Account, other_account: Account, suffix: str) -> None:
    theirs = add_project(other_account, "octo/theirs")

    assert_not_found(account.api.get(project_path(theirs) + suffix))


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("DELETE", "", None),
        ("DELETE", "/buildcache", None),
        ("PUT", "/settings/environment-variables", []),
        ("PUT", "/settings/build-number", {"nextBuildNumber": 5}),
    ],
)
def test_another_accounts_project_cannot_be_changed(
    account: Account, other_account: Account, method: str, suffix: str, body: Any
) -> None:
    theirs = add_project(other_account, "octo/theirs")
    put_cache_object(theirs, "job1/x.zip")

    reply = account.api.call(method, project_path(theirs) + suffix, body)

    assert_not_found(reply)
    assert settings_of(other_account, theirs)["nextBuildNumber"] == 1
    assert cache_keys(theirs) != []


def test_another_accounts_project_cannot_be_updated_by_id(account: Account, other_account: Account) -> None:
    theirs = add_project(other_account, "octo/theirs")

    reply = account.api.put("/projects", {"projectId": theirs["projectId"], "versionFormat": "9.{build}"})

    assert_not_found(reply)
    assert settings_of(other_account, theirs)["versionFormat"] == "1.0.{build}"


def test_same_slug_in_two_accounts_names_each_accounts_own_project(account: Account, other_account: Account) -> None:
    mine = add_project(account, "octo/widget")
    theirs = add_project(other_account, "octo/widget")

    assert account.api.get(project_path(mine)).json["project"]["projectId"] == mine["projectId"]
    assert other_account.api.get(project_path(theirs)).json["project"]["projectId"] == theirs["projectId"]
    assert mine["projectId"] != theirs["projectId"]


# Deleting


def test_delete_project_removes_it(account: Account) -> None:
    project = add_project(account, "octo/widget")
    kept = add_project(account, "octo/other")

    reply = account.api.delete(project_path(project))

    assert reply.status == 204, reply.body
    assert reply.body == b""
    assert_not_found(account.api.get(project_path(project)))
    assert_not_found(account.api.get(project_path(project) + "/settings"))
    assert listed_slugs(account.api) == [kept["slug"]]


def test_deleting_a_project_twice_is_not_found_the_second_time(account: Account) -> None:
    project = add_project(account, "octo/widget")
    assert account.api.delete(project_path(project)).status == 204

    assert_not_found(account.api.delete(project_path(project)))


def test_deleting_a_project_removes_its_build_cache_only(account: Account) -> None:
    project = add_project(account, "octo/widget")
    other = add_project(account, "octo/other")
    put_cache_object(project, "job1/x.zip")
    other_key = put_cache_object(other, "job1/x.zip")

    assert account.api.delete(project_path(project)).status == 204

    assert cache_keys(project) == []
    assert cache_keys(other) == [other_key]


# Build cache


def test_delete_build_cache_of_a_project_without_cache_succeeds(account: Account) -> None:
    project = add_project(account, "octo/widget")

    reply = account.api.delete(project_path(project) + "/buildcache")

    assert reply.status == 204, reply.body
    assert reply.body == b""


def test_delete_build_cache_removes_the_projects_cache_and_leaves_others(
    account: Account, other_account: Account
) -> None:
    project = add_project(account, "octo/widget")
    sibling = add_project(account, "octo/sibling")
    foreign = add_project(other_account, "octo/widget")
    put_cache_object(project, "job1/x.zip")
    put_cache_object(project, "job2/deep/y.zip")
    sibling_key = put_cache_object(sibling, "job1/x.zip")
    foreign_key = put_cache_object(foreign, "job1/x.zip")

    reply = account.api.delete(project_path(project) + "/buildcache")

    assert reply.status == 204, reply.body
    assert cache_keys(project) == []
    assert cache_keys(sibling) == [sibling_key]
    assert cache_keys(foreign) == [foreign_key]
    assert account.api.get(project_path(project)).status == 200


# Permissions


def test_user_role_member_reads_projects_and_settings(account: Account) -> None:
    project = add_project(account, "octo/widget")
    member = member_of_role(account, "User")

    assert listed_slugs(member) == ["widget"]
    assert member.get(project_path(project)).status == 200
    assert settings_of(account, project, member)["slug"] == "widget"
    assert member.get(project_path(project) + "/settings/yaml").status == 200
    assert member.get(project_path(project) + "/settings/environment-variables").status == 200


def test_user_role_member_cannot_add_a_project(account: Account) -> None:
    member = member_of_role(account, "User")

    reply = member.post("/projects", {"repositoryProvider": "gitHub", "repositoryName": "octo/widget"})

    assert_refused(reply, 403)
    assert listed_slugs(account.api) == []


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("DELETE", "", None),
        ("DELETE", "/buildcache", None),
        ("PUT", "/settings/yaml", None),
        ("PUT", "/settings/environment-variables", []),
        ("PUT", "/settings/build-number", {"nextBuildNumber": 5}),
    ],
)
def test_user_role_member_cannot_change_a_project(account: Account, method: str, suffix: str, body: Any) -> None:
    project = add_project(account, "octo/widget")
    cached = put_cache_object(project, "job1/x.zip")
    member = member_of_role(account, "User")
    raw = b"install: echo hi" if suffix == "/settings/yaml" else None

    reply = member.call(method, project_path(project) + suffix, body, raw=raw)

    assert_refused(reply, 403)
    settings = settings_of(account, project)
    assert settings["nextBuildNumber"] == 1
    assert settings["configuration"]["installScripts"] == []
    assert cache_keys(project) == [cached]


def test_user_role_member_cannot_update_project_settings(account: Account) -> None:
    project = add_project(account, "octo/widget")
    member = member_of_role(account, "User")
    settings = settings_of(account, project, member)

    reply = member.put("/projects", {**settings, "versionFormat": "2.{build}"})

    assert_refused(reply, 403)
    assert settings_of(account, project)["versionFormat"] == "1.0.{build}"


def test_role_with_manage_projects_adds_and_deletes_projects(account: Account) -> None:
    account.add_role("Project managers", {"ManageProjects"})
    manager = member_of_role(account, "Project managers")

    project = add_project(account, "octo/widget", caller=manager)
    assert listed_slugs(account.api) == ["widget"]
    reply = manager.delete(project_path(project))

    assert reply.status == 204, reply.body
    assert listed_slugs(account.api) == []


def test_role_with_update_project_settings_changes_settings(account: Account) -> None:
    project = add_project(account, "octo/widget")
    account.add_role("Maintainers", {"UpdateProjectSettings"})
    maintainer = member_of_role(account, "Maintainers")
    settings = settings_of(account, project, maintainer)

    assert maintainer.put("/projects", {**settings, "versionFormat": "2.0.{build}"}).status == 204
    assert maintainer.put(project_path(project) + "/settings/build-number", {"nextBuildNumber": 7}).status == 204

    settings = settings_of(account, project)
    assert (settings["versionFormat"], settings["nextBuildNumber"]) == ("2.0.{build}", 7)
    assert_refused(maintainer.delete(project_path(project)), 403)


def test_role_with_update_project_settings_cannot_add_projects(account: Account) -> None:
    account.add_role("Maintainers", {"UpdateProjectSettings"})
    maintainer = member_of_role(account, "Maintainers")

    reply = maintainer.post("/projects", {"repositoryProvider": "gitHub", "repositoryName": "octo/widget"})

    assert_refused(reply, 403)


# Security descriptor


def test_security_descriptor_lists_the_four_rights_and_every_role(account: Account) -> None:
    custom = account.add_role("Reviewers", {"UpdateProjectSettings"})
    project = add_project(account, "octo/widget")

    descriptor = settings_of(account, project)["securityDescriptor"]

    assert [right["name"] for right in descriptor["accessRightDefinitions"]] == RIGHTS
    assert all(isinstance(right["description"], str) for right in descriptor["accessRightDefinitions"])
    roles = account.api.get("/roles").json
    assert sorted(ace["roleId"] for ace in descriptor["roleAces"]) == sorted(role["roleId"] for role in roles)
    assert {ace["name"] for ace in descriptor["roleAces"]} == {"Administrator", "User", "Reviewers"}
    assert any(ace["roleId"] == custom["roleId"] for ace in descriptor["roleAces"])
    assert project["securityDescriptor"]["accessRightDefinitions"] == descriptor["accessRightDefinitions"]


def test_administrator_ace_allows_every_right(account: Account) -> None:
    project = add_project(account, "octo/widget")

    admin = ace_of(settings_of(account, project), account.role_id("Administrator"))

    assert admin["isAdmin"] is True
    assert admin["accessRights"] == [{"name": right, "allowed": True} for right in RIGHTS]


def test_other_aces_list_the_rights_without_allowed(account: Account) -> None:
    custom = account.add_role("Reviewers")
    project = add_project(account, "octo/widget")
    settings = settings_of(account, project)

    for role_id in (account.role_id("User"), custom["roleId"]):
        ace = ace_of(settings, role_id)
        assert ace["isAdmin"] is False
        assert ace["accessRights"] == [{"name": right} for right in RIGHTS]


def test_denying_update_to_a_role_forbids_its_members_to_change_that_project_only(account: Account) -> None:
    role = account.add_role("Maintainers", {"UpdateProjectSettings"})
    maintainer = member_of_role(account, "Maintainers")
    locked = add_project(account, "octo/locked")
    open_project = add_project(account, "octo/open")
    settings = settings_of(account, locked)

    reply = account.api.put("/projects", descriptor_restricting(settings, role["roleId"], "Update", False))
    assert reply.status == 204, reply.body

    assert_refused(maintainer.put(project_path(locked) + "/settings/yaml", raw=b"install: echo hi"), 403)
    locked_settings = settings_of(account, locked, maintainer)
    assert_refused(maintainer.put("/projects", {**locked_settings, "versionFormat": "2.{build}"}), 403)
    assert settings_of(account, locked)["versionFormat"] == "1.0.{build}"
    assert maintainer.put(project_path(open_project) + "/settings/yaml", raw=b"install: echo hi").status == 204
    assert settings_of(account, open_project)["configuration"]["installScripts"] == [
        {"language": "cmd", "script": "echo hi"}
    ]


def test_restricted_rights_show_in_the_descriptor(account: Account) -> None:
    role = account.add_role("Maintainers", {"UpdateProjectSettings"})
    project = add_project(account, "octo/widget")
    settings = settings_of(account, project)

    restricted = descriptor_restricting(settings, role["roleId"], "Update", False)
    restricted = descriptor_restricting(restricted, account.role_id("User"), "Delete", False)
    assert account.api.put("/projects", restricted).status == 204

    after = settings_of(account, project)
    assert ace_of(after, role["roleId"])["accessRights"] == [
        {"name": "View"},
        {"name": "RunBuild"},
        {"name": "Update", "allowed": False},
        {"name": "Delete"},
    ]
    assert ace_of(after, account.role_id("User"))["accessRights"][3] == {"name": "Delete", "allowed": False}
    assert account.api.get(project_path(project)).json["project"]["securityDescriptor"] == after["securityDescriptor"]


def test_denying_view_to_the_user_role_hides_the_project_from_its_members(account: Account) -> None:
    hidden = add_project(account, "octo/hidden")
    visible = add_project(account, "octo/visible")
    member = member_of_role(account, "User")
    settings = settings_of(account, hidden)

    reply = account.api.put("/projects", descriptor_restricting(settings, account.role_id("User"), "View", False))
    assert reply.status == 204, reply.body

    assert_not_found(member.get(project_path(hidden)))
    assert_not_found(member.get(project_path(hidden) + "/settings"))
    assert listed_slugs(member) == [visible["slug"]]
    assert member.get(project_path(visible)).status == 200
    assert sorted(listed_slugs(account.api)) == ["hidden", "visible"]


def test_restricting_the_administrator_is_refused(account: Account) -> None:
    project = add_project(account, "octo/widget")
    settings = settings_of(account, project)

    reply = account.api.put(
        "/projects", descriptor_restricting(settings, account.role_id("Administrator"), "Update", False)
    )

    assert_refused(reply, 400)
    assert ace_of(settings_of(account, project), account.role_id("Administrator"))["accessRights"] == [
        {"name": right, "allowed": True} for right in RIGHTS
    ]


def test_descriptor_naming_a_role_of_another_account_is_refused(account: Account, other_account: Account) -> None:
    project = add_project(account, "octo/widget")
    foreign_role = other_account.add_role("Theirs")
    settings = settings_of(account, project)
    settings["securityDescriptor"]["roleAces"].append(
        {
            "roleId": foreign_role["roleId"],
            "name": "Theirs",
            "isAdmin": False,
            "accessRights": [{"name": "View", "allowed": False}],
        }
    )

    assert_refused(account.api.put("/projects", settings), 400)


def test_descriptor_naming_an_unknown_right_is_refused(account: Account) -> None:
    project = add_project(account, "octo/widget")
    settings = settings_of(account, project)
    ace_of(settings, account.role_id("User"))["accessRights"].append({"name": "Teleport", "allowed": False})

    assert_refused(account.api.put("/projects", settings), 400)


# Error bodies and junk input

JUNK_BODIES = [
    b"",
    b"\xff\xfe\x00\x01binary\x80",
    b"{",
    b"[1, 2",
    b"null",
    b"42",
    b'"text"',
    b"[]",
    b"[" * 5000 + b"]" * 5000,
    b'{"a": ' * 3000 + b"1" + b"}" * 3000,
]


@pytest.mark.parametrize("raw", JUNK_BODIES, ids=range(len(JUNK_BODIES)))
def test_junk_add_project_body_is_a_client_error(account: Account, raw: bytes) -> None:
    reply = account.api.post("/projects", raw=raw)

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)


@pytest.mark.parametrize("raw", JUNK_BODIES, ids=range(len(JUNK_BODIES)))
def test_junk_update_project_body_is_a_client_error(account: Account, raw: bytes) -> None:
    add_project(account, "octo/widget")

    reply = account.api.put("/projects", raw=raw)

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)


@pytest.mark.parametrize("slug", ["a" * 2000, "%00", "..", "-", "x%2Fy"])
def test_strange_slugs_are_not_found(account: Account, slug: str) -> None:
    reply = account.api.get(f"/projects/{account.name}/{slug}")

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)


def test_project_calls_need_a_key(account: Account) -> None:
    project = add_project(account, "octo/widget")
    anonymous = Caller(account.client, None)

    for reply in (
        anonymous.get("/projects"),
        anonymous.get(project_path(project)),
        anonymous.post("/projects", {"repositoryProvider": "gitHub", "repositoryName": unique("o/r")}),
    ):
        assert_refused(reply, 401)
    assert listed_slugs(account.api) == ["widget"]
