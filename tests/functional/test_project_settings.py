"""Project settings: the JSON object (GET, whole-object PUT), its YAML form, and the next build number."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from chalicelib.api import projects as project_views
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject
from tests.gitserver import GitServer
from tests.support import Account, Caller, Reply, add_project, assert_refused, project_path, view_answer

DEFAULT_VERSION_FORMAT = "1.0.{build}"
BUILD_SCRIPTS = [{"language": "sh", "script": "make"}]
INSTALL_SCRIPTS = [{"language": "cmd", "script": "echo installing"}]
ARTIFACTS = [{"path": "out/*.zip", "name": "pkg", "type": "zip"}]

# The Configuration fields and values the API contract shows for a new project.
SPEC_DEFAULTS: dict[str, Any] = {
    **{
        name: []
        for name in [
            "initScripts",
            "includeBranches",
            "excludeBranches",
            "onBuildSuccessScripts",
            "onBuildErrorScripts",
            "operatingSystem",
            "services",
            "environmentVariables",
            "environmentVariablesMatrix",
            "installScripts",
            "hostsEntries",
            "platform",
            "configuration",
            "buildScripts",
            "beforeBuildScripts",
            "afterBuildScripts",
            "testAssemblies",
            "testCategories",
            "testCategoriesMatrix",
            "testScripts",
            "beforeTestScripts",
            "afterTestScripts",
            "deployments",
            "deployScripts",
            "beforeDeployScripts",
            "afterDeployScripts",
            "matrixAllowFailures",
            "artifacts",
            "notifications",
        ]
    },
    **{
        name: False
        for name in [
            "patchAssemblyInfo",
            "shallowClone",
            "packageWebApplicationProjects",
            "packageWebApplicationProjectsXCopy",
            "packageAzureCloudServiceProjects",
            "packageNuGetProjects",
            "matrixFastFinish",
        ]
    },
    "assemblyVersionFormat": "{version}",
    "assemblyFileVersionFormat": "{version}",
    "assemblyInformationalVersionFormat": "{version}",
    "buildMode": "msbuild",
    "msBuildVerbosity": "minimal",
    "testMode": "auto",
    "deployMode": "providers",
}
PROJECT_FIELDS = {
    "projectId",
    "accountId",
    "accountName",
    "builds",
    "name",
    "slug",
    "repositoryType",
    "repositoryScm",
    "repositoryName",
    "isPrivate",
    "skipBranchesWithoutServiceYml",
    "securityDescriptor",
    "created",
}
SETTINGS_ONLY_FIELDS = {
    "versionFormat",
    "nextBuildNumber",
    "webhookId",
    "webhookUrl",
    "ignoreServiceYml",
    "configuration",
}

YAML_SETTINGS = """\
version: 2.3.{build}
environment:
  GREETING: hello
  PYTHON_VERSION: "3.10"
install:
  - sh: ./setup.sh
build_script:
  - sh: make all
artifacts:
  - path: out/*.zip
    name: pkg
    type: zip
"""


def read_settings(account: Account, project: dict[str, Any], caller: Caller | None = None) -> dict[str, Any]:
    reply = (caller or account.api).get(project_path(project) + "/settings")
    assert reply.status == 200, reply.body
    return reply.json["settings"]


def read_yaml(account: Account, project: dict[str, Any]) -> str:
    reply = account.api.get(project_path(project) + "/settings/yaml")
    assert reply.status == 200, reply.body
    return reply.body.decode()


def put_yaml(account: Account, project: dict[str, Any], text: str, content_type: str = "text/plain") -> Reply:
    return account.api.put(
        project_path(project) + "/settings/yaml", raw=text.encode(), headers={"Content-Type": content_type}
    )


def without_updated(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings as they compare across a write that only touches ``updated``."""
    return {name: value for name, value in settings.items() if name != "updated"}


def with_configuration(settings: dict[str, Any], **fields: Any) -> dict[str, Any]:
    changed = copy.deepcopy(settings)
    changed["configuration"].update(fields)
    return changed


@pytest.fixture
def project(account: Account) -> dict[str, Any]:
    return add_project(account, "octo/widget")


# Reading the settings


def test_settings_hold_the_project_and_the_build_images(account: Account, project: dict[str, Any]) -> None:
    reply = account.api.get(project_path(project) + "/settings")

    assert reply.status == 200, reply.body
    body = reply.json
    assert set(body) == {"project", "settings", "images"}
    assert body["project"] == project
    assert body["images"] and all(isinstance(image["name"], str) and image["name"] for image in body["images"])
    names = {"accountName": project["accountName"], "projectSlug": project["slug"]}
    assert view_answer(account, project_views.get_settings, "/settings", **names) == body  # the route's view


def test_settings_carry_every_project_field_and_the_settings_fields(account: Account, project: dict[str, Any]) -> None:
    settings = read_settings(account, project)

    assert set(settings) >= PROJECT_FIELDS | SETTINGS_ONLY_FIELDS
    assert {name: settings[name] for name in project} == project


def test_new_project_has_the_default_settings(account: Account, project: dict[str, Any]) -> None:
    settings = read_settings(account, project)

    assert settings["versionFormat"] == DEFAULT_VERSION_FORMAT
    assert settings["nextBuildNumber"] == 1
    assert settings["ignoreServiceYml"] is False
    assert isinstance(settings["webhookId"], str) and settings["webhookId"]
    assert settings["webhookUrl"].endswith(f"/api/github/webhook?id={settings['webhookId']}")
    assert settings["webhookUrl"].startswith(("http://", "https://"))


def test_new_project_has_the_default_configuration(account: Account, project: dict[str, Any]) -> None:
    configuration = read_settings(account, project)["configuration"]

    assert {name: configuration.get(name) for name in SPEC_DEFAULTS} == SPEC_DEFAULTS
    assert "AssemblyInfo" in configuration["assemblyInfoFile"]


def test_new_project_yaml_names_no_setting_but_maybe_the_version(account: Account, project: dict[str, Any]) -> None:
    reply = account.api.get(project_path(project) + "/settings/yaml")

    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"].startswith("text/plain")
    document = yaml.safe_load(reply.body.decode()) or {}
    assert set(document) <= {"version"}
    assert document.get("version", DEFAULT_VERSION_FORMAT) == DEFAULT_VERSION_FORMAT


def test_webhook_ids_differ_between_projects(account: Account, project: dict[str, Any]) -> None:
    other = add_project(account, "octo/other")

    assert read_settings(account, project)["webhookId"] != read_settings(account, other)["webhookId"]


# Updating the whole settings object


def test_put_of_unchanged_settings_changes_nothing_but_updated(account: Account, project: dict[str, Any]) -> None:
    before = read_settings(account, project)

    reply = account.api.put("/projects", before)

    assert reply.status == 204, reply.body
    assert reply.body == b""
    after = read_settings(account, project)
    assert without_updated(after) == without_updated(before)
    assert "updated" in after
    assert account.api.get(project_path(project)).json["project"]["updated"] == after["updated"]


def test_put_twice_of_read_settings_is_stable(account: Account, project: dict[str, Any]) -> None:
    changed = with_configuration(read_settings(account, project), buildScripts=BUILD_SCRIPTS, artifacts=ARTIFACTS)
    assert account.api.put("/projects", changed).status == 204
    first = read_settings(account, project)

    assert account.api.put("/projects", first).status == 204

    assert without_updated(read_settings(account, project)) == without_updated(first)


def test_configuration_change_shows_in_settings_and_yaml(account: Account, project: dict[str, Any]) -> None:
    changed = with_configuration(
        read_settings(account, project), buildScripts=BUILD_SCRIPTS, installScripts=INSTALL_SCRIPTS, artifacts=ARTIFACTS
    )

    reply = account.api.put("/projects", changed)

    assert reply.status == 204, reply.body
    configuration = read_settings(account, project)["configuration"]
    assert configuration["buildScripts"] == BUILD_SCRIPTS
    assert configuration["installScripts"] == INSTALL_SCRIPTS
    assert configuration["artifacts"] == ARTIFACTS
    document = yaml.safe_load(read_yaml(account, project))
    assert document["build_script"] == [{"sh": "make"}]
    assert document["install"] == ["echo installing"]
    assert document["artifacts"] == ARTIFACTS


def test_project_level_fields_change_with_a_put(account: Account, project: dict[str, Any]) -> None:
    settings = read_settings(account, project)
    changed = {
        **settings,
        "versionFormat": "3.1.{build}-{branch}",
        "isPrivate": True,
        "skipBranchesWithoutServiceYml": True,
        "ignoreServiceYml": True,
    }

    assert account.api.put("/projects", changed).status == 204

    after = read_settings(account, project)
    assert after["versionFormat"] == "3.1.{build}-{branch}"
    assert (after["isPrivate"], after["skipBranchesWithoutServiceYml"], after["ignoreServiceYml"]) == (True, True, True)
    assert account.api.get(project_path(project)).json["project"]["isPrivate"] is True
    assert yaml.safe_load(read_yaml(account, project))["version"] == "3.1.{build}-{branch}"


def test_put_naming_the_project_by_id_updates_it(account: Account, project: dict[str, Any]) -> None:
    reply = account.api.put("/projects", {"projectId": project["projectId"], "versionFormat": "5.{build}"})

    assert reply.status == 204, reply.body
    assert read_settings(account, project)["versionFormat"] == "5.{build}"


def test_fields_a_put_omits_return_to_their_defaults(account: Account, project: dict[str, Any]) -> None:
    settings = read_settings(account, project)
    customised = with_configuration(
        {**settings, "versionFormat": "2.{build}", "isPrivate": False}, installScripts=INSTALL_SCRIPTS
    )
    assert account.api.put("/projects", customised).status == 204

    reply = account.api.put(
        "/projects",
        {
            "accountName": account.name,
            "slug": project["slug"],
            "configuration": {"buildScripts": BUILD_SCRIPTS},
        },
    )

    assert reply.status == 204, reply.body
    after = read_settings(account, project)
    assert after["versionFormat"] == DEFAULT_VERSION_FORMAT
    assert after["isPrivate"] is True  # private is the default: a PUT that omits isPrivate never publishes
    assert after["configuration"]["installScripts"] == []
    assert after["configuration"]["buildScripts"] == BUILD_SCRIPTS
    assert (after["name"], after["slug"], after["repositoryName"]) == ("widget", "widget", "octo/widget")


def test_put_may_set_the_next_build_number(account: Account, project: dict[str, Any]) -> None:
    settings = read_settings(account, project)

    assert account.api.put("/projects", {**settings, "nextBuildNumber": 42}).status == 204

    assert read_settings(account, project)["nextBuildNumber"] == 42


def test_version_format_without_build_is_refused_and_nothing_changes(account: Account, project: dict[str, Any]) -> None:
    before = read_settings(account, project)
    changed = with_configuration({**before, "versionFormat": "1.0.{branch}"}, buildScripts=BUILD_SCRIPTS)

    reply = account.api.put("/projects", changed)

    assert assert_refused(reply, 400) == "Version format must contain {build} variable."
    assert read_settings(account, project) == before


@pytest.mark.parametrize(
    "configuration",
    [
        {"noSuchSetting": True},
        {"buildScripts": "x"},
        {"buildScripts": [{"language": "fortran", "script": "x"}]},
        {"buildScripts": [{"language": "sh"}]},
        {"buildScripts": [5]},
        {"patchAssemblyInfo": "yes"},
        {"buildMode": 3},
        {"artifacts": [{"name": "no path"}]},
        {"artifacts": "out/*.zip"},
        {"environmentVariables": [{"name": "A"}]},
        {"environmentVariables": {"A": "b"}},
        {"msBuildVerbosity": "loud"},
        {"maxJobs": 0},
        {"notifications": [{}]},
        {"deployments": [{"provider": "S3", "providerSettings": 5}]},
        "not an object",
        [],
    ],
    ids=lambda value: str(value)[:40],
)
def test_bad_configuration_is_refused_and_nothing_changes(
    account: Account, project: dict[str, Any], configuration: Any
) -> None:
    before = read_settings(account, project)
    body = {**before, "versionFormat": "7.{build}", "configuration": configuration}

    assert_refused(account.api.put("/projects", body), 400)
    assert read_settings(account, project) == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("isPrivate", "yes"),
        ("versionFormat", 5),
        ("nextBuildNumber", "abc"),
        ("nextBuildNumber", -1),
        ("nextBuildNumber", 0),
        ("projectId", "seven"),
        ("slug", ["widget"]),
        ("securityDescriptor", "open"),
        ("securityDescriptor", {"roleAces": "all"}),
    ],
)
def test_bad_project_level_field_is_refused_and_nothing_changes(
    account: Account, project: dict[str, Any], field: str, value: Any
) -> None:
    before = read_settings(account, project)

    assert_refused(account.api.put("/projects", {**before, "versionFormat": "7.{build}", field: value}), 400)
    assert read_settings(account, project) == before


def test_put_naming_no_project_is_refused(account: Account, project: dict[str, Any]) -> None:
    assert_refused(account.api.put("/projects", {"versionFormat": "7.{build}"}), 400)


def test_put_whose_id_and_slug_disagree_is_refused(account: Account, project: dict[str, Any]) -> None:
    other = add_project(account, "octo/other")
    before = read_settings(account, project)

    reply = account.api.put("/projects", {**before, "projectId": other["projectId"], "versionFormat": "7.{build}"})

    assert_refused(reply, 400)
    assert read_settings(account, project) == before
    assert read_settings(account, other)["versionFormat"] == DEFAULT_VERSION_FORMAT


# YAML


@pytest.mark.parametrize("content_type", ["text/plain", "plain/text", "application/json", "application/x-yaml"])
def test_yaml_put_is_accepted_whatever_the_content_type(
    account: Account, project: dict[str, Any], content_type: str
) -> None:
    reply = put_yaml(account, project, YAML_SETTINGS, content_type)

    assert reply.status == 204, reply.body
    assert read_settings(account, project)["configuration"]["buildScripts"] == [
        {"language": "sh", "script": "make all"}
    ]


def test_yaml_settings_show_in_the_json_settings(account: Account, project: dict[str, Any]) -> None:
    assert put_yaml(account, project, YAML_SETTINGS).status == 204

    settings = read_settings(account, project)
    configuration = settings["configuration"]
    assert settings["versionFormat"] == "2.3.{build}"
    assert configuration["environmentVariables"] == [
        {"name": "GREETING", "value": {"isEncrypted": False, "value": "hello"}},
        {"name": "PYTHON_VERSION", "value": {"isEncrypted": False, "value": "3.10"}},
    ]
    assert configuration["installScripts"] == [{"language": "sh", "script": "./setup.sh"}]
    assert configuration["buildScripts"] == [{"language": "sh", "script": "make all"}]
    assert configuration["buildMode"] == "script"
    assert configuration["artifacts"] == ARTIFACTS
    environment = account.api.get(project_path(project) + "/settings/environment-variables").json
    assert environment == configuration["environmentVariables"]


def test_yaml_read_back_holds_what_was_written(account: Account, project: dict[str, Any]) -> None:
    assert put_yaml(account, project, YAML_SETTINGS).status == 204

    written = yaml.safe_load(YAML_SETTINGS)
    read_back = yaml.safe_load(read_yaml(account, project))
    assert set(read_back) == set(written)
    for key in ("version", "install", "build_script", "artifacts"):
        assert read_back[key] == written[key]
    assert read_back["environment"]["GREETING"] == "hello"


def test_yaml_round_trip_changes_neither_text_nor_settings(account: Account, project: dict[str, Any]) -> None:
    assert put_yaml(account, project, YAML_SETTINGS).status == 204
    text = read_yaml(account, project)
    settings = read_settings(account, project)

    assert put_yaml(account, project, text).status == 204

    assert read_yaml(account, project) == text
    assert without_updated(read_settings(account, project)) == without_updated(settings)


def test_json_settings_put_and_yaml_agree(account: Account, project: dict[str, Any]) -> None:
    assert put_yaml(account, project, YAML_SETTINGS).status == 204
    text = read_yaml(account, project)

    assert account.api.put("/projects", read_settings(account, project)).status == 204

    assert read_yaml(account, project) == text


def test_empty_yaml_resets_the_configuration(account: Account, project: dict[str, Any]) -> None:
    assert put_yaml(account, project, YAML_SETTINGS).status == 204

    assert put_yaml(account, project, "").status == 204

    configuration = read_settings(account, project)["configuration"]
    assert {name: configuration.get(name) for name in SPEC_DEFAULTS} == SPEC_DEFAULTS


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("install: [unclosed", "line"),
        ("install:\n  - echo one\n bad_indent: x\n", "line"),
        ("bogus_key: 1\n", "bogus_key"),
        ("install:\n  - echo hi\nbuild:\n  no_such_build_setting: true\n", "no_such_build_setting"),
        ("version: 1.0.{branch}\n", "{build}"),
    ],
    ids=["unclosed", "indentation", "unknown-key", "unknown-nested-key", "version-without-build"],
)
def test_bad_yaml_is_refused_with_where_and_nothing_changes(
    account: Account, project: dict[str, Any], text: str, named: str
) -> None:
    assert put_yaml(account, project, YAML_SETTINGS).status == 204
    yaml_before = read_yaml(account, project)
    settings_before = read_settings(account, project)

    message = assert_refused(put_yaml(account, project, text), 400)

    assert named in message
    assert read_yaml(account, project) == yaml_before
    assert read_settings(account, project) == settings_before


@pytest.mark.parametrize(
    "text",
    [
        "- 42\n",  # a list of configurations, each of them a mapping: not this
        "42\n",
        "just some text\n",
        "install: {sh: 1, cmd: 2}\n",
        "environment: [A, B]\n",
        "artifacts:\n  - name: no path\n",
        "build_script:\n  - fortran: x\n",
        "max_jobs: lots\n",
        "a: &x [*x]\n",
        "[" * 3000 + "]" * 3000,
        "!!python/object/apply:os.system ['true']\n",
    ],
    ids=range(11),
)
def test_yaml_of_the_wrong_shape_is_a_client_error(account: Account, project: dict[str, Any], text: str) -> None:
    before = read_settings(account, project)

    reply = put_yaml(account, project, text)

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)
    assert read_settings(account, project) == before


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xfe\x00\x01binary\x80", b"install: \xc3\x28\n", bytes(range(256))],
    ids=["binary", "bad-utf8", "all-bytes"],
)
def test_binary_yaml_body_is_a_client_error(account: Account, project: dict[str, Any], raw: bytes) -> None:
    reply = account.api.put(project_path(project) + "/settings/yaml", raw=raw, headers={"Content-Type": "text/plain"})

    assert_refused(reply, 400)
    assert read_settings(account, project)["configuration"]["installScripts"] == []


# Next build number


def test_build_number_can_be_set(account: Account, project: dict[str, Any]) -> None:
    reply = account.api.put(project_path(project) + "/settings/build-number", {"nextBuildNumber": 42})

    assert reply.status == 204, reply.body
    assert reply.body == b""
    assert read_settings(account, project)["nextBuildNumber"] == 42


def test_build_number_survives_a_settings_put(account: Account, project: dict[str, Any]) -> None:
    assert account.api.put(project_path(project) + "/settings/build-number", {"nextBuildNumber": 42}).status == 204

    assert account.api.put("/projects", {"projectId": project["projectId"]}).status == 204

    assert read_settings(account, project)["nextBuildNumber"] == 42


@pytest.mark.parametrize(
    "body",
    [
        {"nextBuildNumber": 0},
        {"nextBuildNumber": -1},
        {"nextBuildNumber": "abc"},
        {"nextBuildNumber": 1.5},
        {"nextBuildNumber": True},
        {"nextBuildNumber": None},
        {"nextBuildNumber": 2**40},
        {},
        [42],
        42,
    ],
    ids=lambda value: str(value),
)
def test_bad_build_number_is_refused_and_nothing_changes(account: Account, project: dict[str, Any], body: Any) -> None:
    assert account.api.put(project_path(project) + "/settings/build-number", {"nextBuildNumber": 7}).status == 204

    assert_refused(account.api.put(project_path(project) + "/settings/build-number", body), 400)
    assert read_settings(account, project)["nextBuildNumber"] == 7


@pytest.mark.parametrize(
    "raw", [b"", b"\xff\xfe\x00\x01binary\x80", b"{", b"null", b"[" * 5000 + b"]" * 5000], ids=range(5)
)
def test_junk_build_number_body_is_a_client_error(account: Account, project: dict[str, Any], raw: bytes) -> None:
    reply = account.api.put(project_path(project) + "/settings/build-number", raw=raw)

    assert 400 <= reply.status < 500, reply.body
    assert isinstance(reply.json["message"], str)
    assert read_settings(account, project)["nextBuildNumber"] == 1


# Patterns: a /regex/ the filters run on RE2 is refused when saved if RE2 cannot run it.


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("branches:\n  only:\n    - /(?<=release-)1/\n", "/(?<=release-)1/"),
        ("skip_commits:\n  message: /(wip)\\1/\n", "/(wip)\\1/"),
        ("only_commits:\n  author: /^(?!bot)/\n", "/^(?!bot)/"),
        ("deploy:\n  - provider: S3\n    on:\n      branch: /(?<=x)y/\n", "/(?<=x)y/"),
    ],
    ids=["lookbehind", "backreference", "lookahead", "deploy-on-branch"],
)
def test_a_pattern_re2_cannot_run_is_refused_when_saved_as_yaml(
    account: Account, project: dict[str, Any], text: str, named: str
) -> None:
    before = read_settings(account, project)

    message = assert_refused(put_yaml(account, project, text), 400)

    assert named in message and "RE2" in message
    assert read_settings(account, project) == before


@pytest.mark.parametrize(
    ("field", "value"),
    [("excludeBranches", [{"value": "/(?<=x)a/"}]), ("skipCommitsMessage", "/(a)\\1/")],
    ids=["lookbehind", "backreference"],
)
def test_a_pattern_re2_cannot_run_is_refused_when_saved_as_json(
    account: Account, project: dict[str, Any], field: str, value: Any
) -> None:
    before = read_settings(account, project)

    message = assert_refused(account.api.put("/projects", with_configuration(before, **{field: value})), 400)

    assert str(value[0]["value"] if isinstance(value, list) else value) in message
    assert read_settings(account, project) == before


def test_a_pattern_re2_runs_is_saved(account: Account, project: dict[str, Any]) -> None:
    assert put_yaml(account, project, "skip_commits:\n  message: /^(a+)+$/\n").status == 204

    assert read_settings(account, project)["configuration"]["skipCommitsMessage"] == "/^(a+)+$/"


# --- settings YAML that takes what appveyor.yml takes: for: items and a list of configurations (issue 36) --------


def branch_project(account: Account, git_server: GitServer) -> BuildProject:
    """A project of a repository without appveyor.yml (its settings build it), with a master and a dev branch."""
    project = BuildProject(account, git_server, {"README.md": "no appveyor.yml here\n"})
    project.repository.commit({"README.md": "the dev branch\n"}, branch="dev")
    return project


def built_log(project: BuildProject, branch: str) -> str:
    build = project.run(branch=branch)
    assert build["status"] == "success", build
    return project.log(build["jobs"][0]["jobId"])


def test_a_settings_yaml_with_for_items_is_taken_and_each_branch_builds_with_its_item(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = branch_project(account, git_server)
    text = (
        "environment:\n  STAGE: main\nbuild_script:\n  - echo built for $STAGE\n"
        "for:\n  - branches:\n      only:\n        - dev\n    environment:\n      STAGE: dev\n"
    )

    reply = put_yaml(account, project.project, text)

    assert reply.status == 204, reply.body
    assert read_yaml(account, project.project) == text  # kept as written
    assert "built for main" in built_log(project, "master")
    assert "built for dev" in built_log(project, "dev")
    # the variables put as JSON replace the settings for every branch: one configuration from then on
    variables = [{"name": "STAGE", "value": {"isEncrypted": False, "value": "json"}}]
    assert account.api.put(f"{project.path}/settings/environment-variables", variables).status == 204
    assert "for:" not in read_yaml(account, project.project)
    assert "built for json" in built_log(project, "dev")


def test_a_settings_yaml_with_a_list_of_configurations_is_taken_and_each_branch_builds_its_own(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = branch_project(account, git_server)
    text = (
        "- branches:\n    only:\n      - dev\n  build_script:\n    - echo the dev configuration\n"
        "- build_script:\n    - echo the other configuration\n"
    )

    reply = put_yaml(account, project.project, text)

    assert reply.status == 204, reply.body
    assert read_settings(account, project.project)["configuration"]["buildScripts"] == [
        {"language": "cmd", "script": "echo the other configuration"}
    ]  # what the settings show: the default branch's
    assert "the other configuration" in built_log(project, "master")
    assert "the dev configuration" in built_log(project, "dev")


def test_a_per_branch_settings_yaml_with_a_plain_secret_is_refused_and_changes_nothing(
    account: Account, git_server: GitServer
) -> None:
    project = branch_project(account, git_server)
    before = read_yaml(account, project.project)
    text = "environment:\n  TOKEN:\n    secure: a-plain-text-secret\nfor:\n  - branches:\n      only: [dev]\n"

    message = assert_refused(put_yaml(account, project.project, text), 400)

    assert message.startswith("environment.TOKEN: settings with for: items")
    assert read_yaml(account, project.project) == before
