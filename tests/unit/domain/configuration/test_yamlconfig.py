"""appveyor.yml <-> Configuration: what each key reads as, round trips both ways, errors that say where, the merge."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from chalicelib.domain.configuration.yamlconfig import (
    DEFAULT_VERSION_FORMAT,
    default_configuration,
    from_yaml,
    is_per_branch,
    merge_repository_file,
    read_settings_yaml,
    to_yaml,
)
from chalicelib.domain.configuration.yamlconfig.notifications import read_back, refusal
from chalicelib.errors import Invalid

Json = dict[str, Any]


def named(name: str, value: str | None = None, *, secure: bool = False) -> Json:
    stored: Json = {"isEncrypted": secure} if value is None else {"isEncrypted": secure, "value": value}
    return {"name": name, "value": stored}


def values(*texts: str) -> list[Json]:
    return [{"value": text} for text in texts]


def script(text: str, language: str = "cmd") -> Json:
    return {"language": language, "script": text}


def row(*variables: Json) -> Json:
    return {"variables": list(variables)}


def configuration(**fields: Any) -> Json:
    return {**default_configuration(), **fields}


def changes(text: str) -> Json:
    """The fields from_yaml sets to something other than their default."""
    defaults = default_configuration()
    config, _ = from_yaml(text)
    return {field: value for field, value in config.items() if value != defaults[field]}


def round_trips(config: Json, version_format: str | None = None) -> bool:
    return from_yaml(to_yaml(config, version_format)) == (config, version_format)


# --- defaults ----------------------------------------------------------------------------------------------------

SPEC_DEFAULTS = {
    **dict.fromkeys(
        [
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
        ],
        [],
    ),
    **dict.fromkeys(
        [
            "patchAssemblyInfo",
            "shallowClone",
            "packageWebApplicationProjects",
            "packageWebApplicationProjectsXCopy",
            "packageAzureCloudServiceProjects",
            "packageNuGetProjects",
            "matrixFastFinish",
        ],
        False,
    ),
    "assemblyInfoFile": "**\\AssemblyInfo.*",
    "assemblyVersionFormat": "{version}",
    "assemblyFileVersionFormat": "{version}",
    "assemblyInformationalVersionFormat": "{version}",
    "buildMode": "msbuild",
    "msBuildVerbosity": "minimal",
    "testMode": "auto",
    "deployMode": "providers",
}


def test_default_configuration_has_the_spec_fields_with_their_shown_values() -> None:
    defaults = default_configuration()
    assert {field: defaults[field] for field in SPEC_DEFAULTS} == SPEC_DEFAULTS


def test_default_configuration_is_a_fresh_copy_each_time() -> None:
    first = default_configuration()
    first["installScripts"].append(script("echo"))
    assert default_configuration()["installScripts"] == []


def test_an_empty_file_gives_the_defaults_and_no_version() -> None:
    assert from_yaml("") == (default_configuration(), None)
    assert from_yaml("# only a comment\n") == (default_configuration(), None)


def test_the_default_configuration_writes_nothing_but_the_version() -> None:
    assert to_yaml(default_configuration(), None) == ""
    assert to_yaml(default_configuration(), DEFAULT_VERSION_FORMAT) == "version: 1.0.{build}\n"


def test_fields_missing_from_the_configuration_count_as_defaults() -> None:
    assert to_yaml({"skipTags": True}, None) == "skip_tags: true\n"


# --- what each key reads as --------------------------------------------------------------------------------------

SCRIPT_KEYS = {
    "init": "initScripts",
    "clone_script": "cloneScripts",
    "install": "installScripts",
    "before_build": "beforeBuildScripts",
    "after_build": "afterBuildScripts",
    "before_package": "beforePackageScripts",
    "before_test": "beforeTestScripts",
    "after_test": "afterTestScripts",
    "before_deploy": "beforeDeployScripts",
    "after_deploy": "afterDeployScripts",
    "on_success": "onBuildSuccessScripts",
    "on_failure": "onBuildErrorScripts",
    "on_finish": "onBuildFinishScripts",
}

READS: dict[str, tuple[str, Json]] = {
    "pull_requests": (
        "pull_requests:\n  do_not_increment_build_number: true",
        {"doNotIncrementBuildNumberOnPullRequests": True},
    ),
    "branches.only": (
        "branches:\n  only:\n    - master\n    - /release\\/.*/",
        {"includeBranches": values("master", "/release\\/.*/"), "branchesMode": "include"},
    ),
    "branches.except": ("branches:\n  except: [gh-pages]", {"excludeBranches": values("gh-pages")}),
    "branches.both": (
        "branches: {only: [main], except: [wip]}",
        {"includeBranches": values("main"), "excludeBranches": values("wip"), "branchesMode": "include"},
    ),
    "skip_tags": ("skip_tags: true", {"skipTags": True}),
    "skip_non_tags": ("skip_non_tags: yes", {"skipNonTags": True}),
    "skip_commits": (
        "skip_commits:\n  message: /\\[chore\\]/\n  author: John\n  files:\n    - docs/*\n    - '**/*.md'",
        {
            "skipCommitsMessage": "/\\[chore\\]/",
            "skipCommitsAuthor": "John",
            "skipCommitsFiles": values("docs/*", "**/*.md"),
        },
    ),
    "only_commits": (
        "only_commits:\n  message: /build/\n  author: /Jack|Jill/\n  files: src/",
        {"onlyCommitsMessage": "/build/", "onlyCommitsAuthor": "/Jack|Jill/", "onlyCommitsFiles": values("src/")},
    ),
    "skip_branch_with_pr": ("skip_branch_with_pr: true", {"skipBranchWithPullRequests": True}),
    "max_jobs": ("max_jobs: 4", {"maxJobs": 4}),
    "image": ("image: Visual Studio 2019", {"operatingSystem": values("Visual Studio 2019")}),
    "image.list": (
        "image:\n  - Ubuntu\n  - Visual Studio 2022",
        {"operatingSystem": values("Ubuntu", "Visual Studio 2022")},
    ),
    "os": ("os: Visual Studio 2015", {"operatingSystem": values("Visual Studio 2015")}),
    "build_cloud": ("build_cloud: [cloud-a, cloud-b]", {"buildCloud": values("cloud-a", "cloud-b")}),
    "stack": ("stack: node 9, mysql", {"stacks": values("node 9", "mysql")}),
    "clone_folder": ("clone_folder: c:\\projects\\app", {"cloneFolder": "c:\\projects\\app"}),
    "clone_depth": ("clone_depth: 5", {"cloneDepth": 5}),
    "shallow_clone": ("shallow_clone: true", {"shallowClone": True}),
    "hosts": (
        "hosts:\n  queue-server: 127.0.0.1\n  db.local: 10.0.0.2",
        {"hostsEntries": [{"host": "queue-server", "ip": "127.0.0.1"}, {"host": "db.local", "ip": "10.0.0.2"}]},
    ),
    "environment": (
        "environment:\n  CONFIG: Release\n  TOKEN:\n    secure: aBc+/==\n  EMPTY:",
        {"environmentVariables": [named("CONFIG", "Release"), named("TOKEN", "aBc+/==", secure=True), named("EMPTY")]},
    ),
    "environment.matrix": (
        "environment:\n  global:\n    A: one\n  matrix:\n    - PY: 2.7\n    - PY: 3.11\n      KEY: {secure: xyz}",
        {
            "environmentVariables": [named("A", "one")],
            "environmentVariablesMatrix": [
                row(named("PY", "2.7")),
                row(named("PY", "3.11"), named("KEY", "xyz", secure=True)),
            ],
        },
    ),
    "matrix": (
        "matrix:\n  fast_finish: true\n  allow_failures:\n    - platform: x86\n      configuration: Debug\n"
        "  exclude:\n    - image: Ubuntu\n      PY: 2.7\n  only:\n    - image: Ubuntu\n  except:\n"
        "    - platform: ARM",
        {
            "matrixFastFinish": True,
            "matrixAllowFailures": [row(named("platform", "x86"), named("configuration", "Debug"))],
            "matrixExclude": [row(named("image", "Ubuntu"), named("PY", "2.7"))],
            "matrixOnly": [row(named("image", "Ubuntu"))],
            "matrixExcept": [row(named("platform", "ARM"))],
        },
    ),
    "cache": (
        "cache:\n  - packages -> **\\packages.config\n  - node_modules",
        {"cacheEntries": values("packages -> **\\packages.config", "node_modules")},
    ),
    "services": ("services: [mssql2017, iis]", {"services": values("mssql2017", "iis")}),
    "assembly_info": (
        "assembly_info:\n  patch: true\n  file: AssemblyInfo.*\n  assembly_version: '{version}.0'\n"
        "  assembly_file_version: '{version}.1'\n  assembly_informational_version: '{version}-rc'",
        {
            "patchAssemblyInfo": True,
            "assemblyInfoFile": "AssemblyInfo.*",
            "assemblyVersionFormat": "{version}.0",
            "assemblyFileVersionFormat": "{version}.1",
            "assemblyInformationalVersionFormat": "{version}-rc",
        },
    ),
    "dotnet_csproj": (
        "dotnet_csproj:\n  patch: true\n  file: src\\*.csproj\n  version: '{version}'\n"
        "  version_prefix: '1.2'\n  package_version: '{version}-pre'\n  assembly_version: '1.0'\n"
        "  file_version: '{version}.0'\n  informational_version: '{version}-info'",
        {
            "patchDotnetCsproj": True,
            "dotnetCsprojFile": "src\\*.csproj",
            "dotnetCsprojVersionPrefixFormat": "1.2",
            "dotnetCsprojPackageVersionFormat": "{version}-pre",
            "dotnetCsprojAssemblyVersionFormat": "1.0",
            "dotnetCsprojFileVersionFormat": "{version}.0",
            "dotnetCsprojInformationalVersionFormat": "{version}-info",
        },
    ),
    "nuget": (
        "nuget:\n  account_feed: true\n  project_feed: true\n  disable_publish_on_pr: true\n"
        "  publish_wap_octopus: true",
        {
            "configureNuGetAccountSource": True,
            "configureNuGetProjectSource": True,
            "disableNuGetPublishOnPullRequests": True,
            "disableNuGetPublishForOctopusPackages": True,
        },
    ),
    "xamarin": (
        "xamarin:\n  email: me@example.com\n  password:\n    secure: pw==\n  android: true\n  ios: true",
        {
            "xamarinEmail": {"isEncrypted": False, "value": "me@example.com"},
            "xamarinPassword": {"isEncrypted": True, "value": "pw=="},
            "xamarinRegisterAndroidProduct": True,
            "xamarinRegisterIosProduct": True,
        },
    ),
    "platform": ("platform: [x86, Any CPU]", {"platform": values("x86", "Any CPU")}),
    "configuration": ("configuration: Release", {"configuration": values("Release")}),
    "build": (
        "build:\n  project: App.sln\n  parallel: true\n  verbosity: detailed\n  publish_wap: true\n"
        "  publish_wap_xcopy: true\n  publish_wap_beanstalk: true\n  publish_wap_octopus: true\n"
        "  publish_azure_webjob: true\n  publish_azure: true\n  publish_aspnet_core: true\n"
        "  publish_core_console: true\n  publish_nuget: true\n  publish_nuget_symbols: true\n"
        "  include_nuget_references: true",
        {
            "msBuildProjectFileName": "App.sln",
            "msBuildInParallel": True,
            "msBuildVerbosity": "detailed",
            **dict.fromkeys(
                [
                    "packageWebApplicationProjects",
                    "packageWebApplicationProjectsXCopy",
                    "packageWebApplicationProjectsBeanstalk",
                    "packageWebApplicationProjectsOctopus",
                    "packageAzureWebJobProjects",
                    "packageAzureCloudServiceProjects",
                    "packageAspNetCoreProjects",
                    "packageDotnetConsoleProjects",
                    "packageNuGetProjects",
                    "packageNuGetSymbols",
                    "includeNuGetReferences",
                ],
                True,
            ),
        },
    ),
    "build.off": ("build: off", {"buildMode": "none"}),
    "build_script": (
        "build_script:\n  - ps: .\\build.ps1",
        {"buildMode": "script", "buildScripts": [script(".\\build.ps1", "ps")]},
    ),
    "test": (
        "test:\n  assemblies:\n    only: [a.dll, b.dll]\n  categories:\n    except: [Slow]",
        {"testAssemblies": values("a.dll", "b.dll"), "testCategories": values("Slow"), "testCategoriesMode": "exclude"},
    ),
    "test.categories_groups": (
        "test:\n  assemblies: [a.dll]\n  categories:\n    - A\n    - [UI]\n    - [DAL, BL]",
        {
            "testAssemblies": values("a.dll"),
            "testCategories": values("A"),
            "testCategoriesMatrix": [{"categories": values("UI")}, {"categories": values("DAL", "BL")}],
        },
    ),
    "test.except_assemblies": (
        "test:\n  assemblies:\n    except: [slow.dll]",
        {"testAssemblies": values("slow.dll"), "testAssembliesMode": "exclude"},
    ),
    "test.off": ("test: off", {"testMode": "none"}),
    "test_script": (
        "test_script:\n  - sh: make test",
        {"testMode": "script", "testScripts": [script("make test", "sh")]},
    ),
    "artifacts": (
        "artifacts:\n  - path: bin\\*.zip\n    name: zip\n    type: zip\n  - out\\*.nupkg",
        {"artifacts": [{"path": "bin\\*.zip", "name": "zip", "type": "zip"}, {"path": "out\\*.nupkg"}]},
    ),
    "deploy": (
        "deploy:\n  - provider: NuGet\n    api_key:\n      secure: key==\n    skip_symbols: false\n"
        "    on:\n      branch: master\n      appveyor_repo_tag: true\n"
        "  - provider: GitHub\n    on:\n      branch: [main, dev]",
        {
            "deployments": [
                {
                    "provider": "NuGet",
                    "providerSettings": [named("api_key", "key==", secure=True), named("skip_symbols", "false")],
                    "onBranch": values("master"),
                    "onEnvironmentVariables": [named("appveyor_repo_tag", "true")],
                },
                {
                    "provider": "GitHub",
                    "providerSettings": [],
                    "onBranch": values("main", "dev"),
                    "onEnvironmentVariables": [],
                },
            ]
        },
    ),
    "deploy.off": ("deploy: off", {"deployMode": "none"}),
    "deploy_script": (
        "deploy_script:\n  - ./deploy.sh",
        {"deployMode": "script", "deployScripts": [script("./deploy.sh")]},
    ),
    "notifications": (
        "notifications:\n  - provider: Email\n    to:\n      - a@example.com\n"
        "    subject: 'Build {{status}}'\n    on_build_success: false\n    on_build_failure: true\n"
        "    on_build_status_changed: true\n"
        "  - provider: Slack\n    incoming_webhook:\n      secure: hook==",
        {
            "notifications": [
                {
                    "provider": "Email",
                    "settings": {"to": ["a@example.com"], "subject": "Build {{status}}"},
                    "onBuildSuccess": False,
                    "onBuildFailure": True,
                    "onBuildStatusChanged": True,
                },
                {
                    "provider": "Slack",
                    "settings": {"incoming_webhook": {"secure": "hook=="}},
                    "onBuildSuccess": False,
                    "onBuildFailure": False,
                    "onBuildStatusChanged": False,
                },
            ]
        },
    ),
    **{
        key: (
            f"{key}:\n  - echo one\n  - ps: Write-Host two\n  - pwsh: Get-Item .\n  - sh: ls\n  - cmd: dir",
            {
                field: [
                    script("echo one"),
                    script("Write-Host two", "ps"),
                    script("Get-Item .", "pwsh"),
                    script("ls", "sh"),
                    {**script("dir"), "windowsOnly": True},  # an explicit cmd: line runs on Windows only
                ]
            },
        )
        for key, field in SCRIPT_KEYS.items()
    },
}


@pytest.mark.parametrize(("text", "expected"), READS.values(), ids=READS.keys())
def test_each_key_reads_as_its_configuration_fields(text: str, expected: Json) -> None:
    assert changes(text) == expected


@pytest.mark.parametrize("text", [text for text, _ in READS.values()], ids=READS.keys())
def test_each_key_round_trips_yaml_to_json_to_yaml(text: str) -> None:
    config, version_format = from_yaml(text)
    written = to_yaml(config, version_format)
    assert from_yaml(written) == (config, version_format)
    assert to_yaml(*from_yaml(written)) == written


def test_version_is_the_separate_version_format() -> None:
    assert from_yaml("version: 2.1.{build}-{branch}") == (default_configuration(), "2.1.{build}-{branch}")


def test_a_script_given_as_one_string_is_a_list_of_one() -> None:
    assert changes("install: npm ci") == {"installScripts": [script("npm ci")]}


def test_multi_line_scripts_keep_their_lines_and_are_written_as_literal_blocks() -> None:
    text = "on_finish:\n  - ps: |\n      $x = 1\n      Write-Host $x\n  - |-\n    echo a\n    echo b\n"
    config, _ = from_yaml(text)
    assert config["onBuildFinishScripts"] == [script("$x = 1\nWrite-Host $x\n", "ps"), script("echo a\necho b")]
    assert to_yaml(config, None) == text


def test_variable_values_keep_the_text_they_were_written_with() -> None:
    config, _ = from_yaml(
        "environment:\n  PYTHON_VERSION: 3.10\n  CI: true\n  CAPS: True\n  OCTAL: 010\n  QUOTED: 'null'\n  EQUALS: =\n"
    )
    assert config["environmentVariables"] == [
        named("PYTHON_VERSION", "3.10"),
        named("CI", "true"),
        named("CAPS", "True"),
        named("OCTAL", "010"),
        named("QUOTED", "null"),
        named("EQUALS", "="),
    ]
    assert to_yaml(config, None) == (
        "environment:\n  PYTHON_VERSION: 3.10\n  CI: true\n  CAPS: True\n"
        "  OCTAL: 010\n  QUOTED: 'null'\n  EQUALS: '='\n"
    )


def test_an_empty_variable_has_no_value() -> None:
    assert changes("environment:\n  A:\n  B: ''") == {"environmentVariables": [named("A"), named("B")]}


def test_plain_variables_beside_a_matrix_are_common_to_every_job() -> None:
    config, _ = from_yaml("environment:\n  COMMON: x\n  matrix:\n    - JOB: 1\n")
    assert config["environmentVariables"] == [named("COMMON", "x")]
    assert to_yaml(config, None) == "environment:\n  global:\n    COMMON: x\n  matrix:\n    - JOB: 1\n"


def test_deploy_on_keeps_its_plain_key_and_values() -> None:
    text = "deploy:\n  - provider: GitHub\n    on:\n      branch: main\n      APPVEYOR_REPO_TAG: true\n"
    assert to_yaml(*from_yaml(text)) == text


def test_build_off_wins_over_a_build_script() -> None:
    assert changes("build: off\nbuild_script: [make]") == {"buildMode": "none", "buildScripts": [script("make")]}


def test_build_false_is_off() -> None:
    assert changes("build: false") == {"buildMode": "none"}


def test_an_empty_script_section_still_selects_the_script_mode() -> None:
    config, _ = from_yaml("test_script:")
    assert (config["testMode"], config["testScripts"]) == ("script", [])
    assert round_trips(config)


def test_an_empty_cmd_item_is_an_empty_script() -> None:
    assert changes("install:\n  - cmd:") == {"installScripts": [{**script(""), "windowsOnly": True}]}


# --- JSON -> YAML -> JSON ----------------------------------------------------------------------------------------

JSON_CASES: dict[str, Json] = {
    "defaults": configuration(),
    "scripts": configuration(
        installScripts=[script("echo 'a: b'"), script("two\nlines", "pwsh"), script("off"), script("5"), script("")]
    ),
    "variables": configuration(
        environmentVariables=[
            named("A", "yes"),
            named("B", "~"),
            named("C", "  padded "),
            named("on", "1.0"),
            named("D", "x", secure=True),
            named("E"),
        ]
    ),
    "matrix": configuration(
        environmentVariablesMatrix=[row(named("X", "1")), row()],
        matrixAllowFailures=[row(named("image", "Ubuntu"))],
        matrixFastFinish=True,
    ),
    "variable named global": configuration(environmentVariables=[named("global", "x")]),
    "modes": configuration(buildMode="none", testMode="script", deployMode="none"),
    "script mode with no scripts": configuration(buildMode="script", deployMode="script"),
    "deployments": configuration(
        deployments=[
            {
                "provider": "S3",
                "providerSettings": [named("bucket", "b"), named("folder")],
                "onBranch": [],
                "onEnvironmentVariables": [named("PLATFORM", "x64")],
            }
        ]
    ),
    "notifications": configuration(
        notifications=[
            {
                "provider": "Webhook",
                "settings": {"url": "https://x/y", "headers": {"A": "1"}, "body": "{\n}\n", "method": None},
                "onBuildSuccess": True,
                "onBuildFailure": True,
                "onBuildStatusChanged": False,
            }
        ]
    ),
    "test selection": configuration(
        testAssemblies=values("a.dll"), testAssembliesMode="exclude", testCategories=values("Fast")
    ),
}


@pytest.mark.parametrize("config", JSON_CASES.values(), ids=JSON_CASES.keys())
def test_configurations_round_trip_json_to_yaml_to_json(config: Json) -> None:
    assert round_trips(config, "1.0.{build}")
    assert round_trips(config, None)


# --- the kitchen sink --------------------------------------------------------------------------------------------

KITCHEN_SINK = """\
version: 2.1.{build}
pull_requests:
  do_not_increment_build_number: true
branches:
  only: [master]
  except: [gh-pages]
skip_tags: true
skip_non_tags: true
skip_commits:
  message: /WIP/
only_commits:
  files: [src/]
skip_branch_with_pr: true
max_jobs: 2
image: [Ubuntu, Visual Studio 2019]
build_cloud: cloud
stack: node 18
init: [echo init]
clone_folder: /src
clone_depth: 3
shallow_clone: true
clone_script: [git clone x]
hosts: {db: 127.0.0.1}
environment:
  global: {A: 1}
  matrix:
    - {B: 2}
matrix:
  fast_finish: true
  allow_failures: [{platform: x86}]
  exclude: [{image: Ubuntu, platform: x86}]
  only: [{configuration: Release}]
  except: [{configuration: Debug}]
cache: [node_modules]
services: [mysql]
install: [npm ci]
assembly_info: {patch: true}
dotnet_csproj: {patch: true}
nuget: {account_feed: true}
xamarin: {android: true}
platform: [x86, x64]
configuration: [Release, Debug]
build: {project: App.sln}
build_script: [make]
before_build: [echo bb]
before_package: [echo bp]
after_build: [echo ab]
test: {assemblies: [a.dll]}
test_script: [make test]
before_test: [echo bt]
after_test: [echo at]
artifacts: [dist/*.zip]
before_deploy: [echo bd]
deploy: [{provider: Environment, name: prod}]
deploy_script: [./deploy.sh]
after_deploy: [echo ad]
on_success: [echo ok]
on_failure: [echo failed]
on_finish: [echo done]
notifications: [{provider: Email, to: [a@example.com], on_build_failure: true}]
"""

DOCUMENTED_ORDER = [
    "version",
    "pull_requests",
    "branches",
    "skip_tags",
    "skip_non_tags",
    "skip_commits",
    "only_commits",
    "skip_branch_with_pr",
    "max_jobs",
    "image",
    "build_cloud",
    "stack",
    "init",
    "clone_folder",
    "clone_depth",
    "shallow_clone",
    "clone_script",
    "hosts",
    "environment",
    "matrix",
    "cache",
    "services",
    "install",
    "assembly_info",
    "dotnet_csproj",
    "nuget",
    "xamarin",
    "platform",
    "configuration",
    "build",
    "build_script",
    "before_build",
    "before_package",
    "after_build",
    "test",
    "test_script",
    "before_test",
    "after_test",
    "artifacts",
    "before_deploy",
    "deploy",
    "deploy_script",
    "after_deploy",
    "on_success",
    "on_failure",
    "on_finish",
    "notifications",
]


def test_a_file_using_every_key_round_trips_and_is_written_in_documented_order() -> None:
    config, version_format = from_yaml(KITCHEN_SINK)
    written = to_yaml(config, version_format)
    assert list(yaml.safe_load(written)) == DOCUMENTED_ORDER
    assert from_yaml(written) == (config, version_format)
    assert to_yaml(*from_yaml(written)) == written
    assert (config["buildMode"], config["testMode"], config["deployMode"]) == ("script", "script", "script")
    assert json.loads(json.dumps(config)) == config  # plain JSON values only, ready to store and serve


# --- errors ------------------------------------------------------------------------------------------------------


def invalid_message(text: str) -> str:
    with pytest.raises(Invalid) as refusal:
        from_yaml(text)
    return refusal.value.message


def test_malformed_yaml_names_the_line() -> None:
    message = invalid_message("install:\n  - echo a\n - echo b\n")
    assert "not valid YAML" in message
    assert "line 3" in message


def test_an_unknown_key_is_named() -> None:
    assert invalid_message("version: 1.{build}\ninstal: [x]").startswith("instal: unknown appveyor.yml setting")


def test_a_version_without_build_is_refused() -> None:
    assert "Version format must contain {build} variable." in invalid_message("version: 1.0.0")


LISTED = "- branches: {only: [main]}\n  install: [x]\n- branches: {only: [dev]}\n  install: [y]\n"
WITH_FOR = "install: [x]\nfor:\n  - branches: {only: [dev]}\n    install: [y]\n"


@pytest.mark.parametrize(
    ("text", "branch", "install"),
    [
        (LISTED, "main", "x"),
        (LISTED, "dev", "y"),
        (LISTED, "other", "x"),
        (WITH_FOR, "main", "x"),
        (WITH_FOR, "dev", "y"),
    ],
)
def test_a_projects_settings_yaml_takes_a_list_of_configurations_and_for_items_read_for_a_branch(
    text: str, branch: str, install: str
) -> None:
    configuration, _ = read_settings_yaml(text, branch)

    assert configuration["installScripts"] == [script(install)]
    assert is_per_branch(text)


def test_a_projects_settings_yaml_refuses_a_mistake_in_an_item_its_branch_does_not_read() -> None:
    with pytest.raises(Invalid) as refusal:
        read_settings_yaml(WITH_FOR + "  - branches: {only: [qa]}\n    install: {not: scripts}\n", "main")
    assert refusal.value.message.startswith("for[1].install: ")


def test_a_top_level_scalar_is_refused() -> None:
    assert "mapping" in invalid_message("just text")


WRONG_SHAPES = {
    "install: 5": "install: ",
    "install: [echo, {bash: ls}]": "install[1]: ",
    "environment: [1, 2]": "environment: ",
    "environment: {A: [1]}": "environment.A: ",
    "environment: {A: {secret: x}}": "environment.A: ",
    "environment: {A: 1, global: {A: 2}}": "environment.A: ",
    "environment: {matrix: [5]}": "environment.matrix[0]: ",
    "matrix: {fast_finish: maybe}": "matrix.fast_finish: ",
    "matrix: {fail_fast: true}": "matrix.fail_fast: ",
    "skip_tags: 'yes'": "skip_tags: ",
    "max_jobs: 0": "max_jobs: ",
    "clone_depth: deep": "clone_depth: ",
    "hosts: [a]": "hosts: ",
    "image: {name: Ubuntu}": "image: ",
    "branches: [main]": "branches: ",
    "branches: {only: [[main]]}": "branches.only[0]: ",
    "build: true": "build: ",
    "build: {verbosity: loud}": "build.verbosity: ",
    "build: {projekt: App.sln}": "build.projekt: ",
    "test: {assemblies: {only: [a], except: [b]}}": "test.assemblies: ",
    "test: {suites: [x]}": "test.suites: ",
    "artifacts: [{name: x}]": "artifacts[0]: ",
    "artifacts: [{path: x, kind: zip}]": "artifacts[0].kind: ",
    "deploy: [{on: {branch: main}}]": "deploy[0]: ",
    "deploy: [{provider: S3, folders: [a, b]}]": "deploy[0].folders: ",
    "deploy: [{provider: S3, on: [main]}]": "deploy[0].on: ",
    "notifications: [{provider: Email, on_build_success: sometimes}]": "notifications[0].on_build_success: ",
    "assembly_info: {assembly_version: {version}}": "assembly_info.assembly_version: ",
    "os: Ubuntu\nimage: Ubuntu": "os: ",
}


@pytest.mark.parametrize(("text", "path"), WRONG_SHAPES.items(), ids=WRONG_SHAPES.keys())
def test_a_value_of_the_wrong_shape_names_its_key_path(text: str, path: str) -> None:
    assert invalid_message(text).startswith(path)


# Read as written (a repository's file builds with them: its builds name each entry not sent); project settings
# refuse them when new or changed (tests/functional/test_chat_notifications.py).
UNSENT_ENTRIES = {
    "{provider: Slack, channel: '#builds'}": "notifications[0]: a Slack entry needs incoming_webhook",
    "{provider: Slack, incoming_webhook: https://h, auth_token: t, channel: c}": "notifications[0]: a Slack entry",
    "{provider: Slack, incoming_webhook: https://h, webhook_url: y}": "notifications[0].webhook_url: unknown Slack",
    "{provider: Slack, incoming_webhook: [https://h/x]}": "notifications[0].incoming_webhook: incoming_webhook must",
    "{provider: Slack, auth_token: t, channel: {secure: c}}": "notifications[0].channel: channel must be a text value.",
    "{provider: MicrosoftTeams, template: hi}": "notifications[0]: a MicrosoftTeams entry needs incoming_webhook",
    "{provider: Slack, incoming_webhook: {secure: token}, channel: on}": None,
    "{provider: MicrosoftTeams, incoming_webhook: https://h, template: hi}": None,
    "{provider: webhook, url: https://h, anything: else}": None,
}


@pytest.mark.parametrize(("entry", "refused"), UNSENT_ENTRIES.items(), ids=UNSENT_ENTRIES.keys())
def test_a_chat_entry_conveyor_cannot_send_is_read_and_its_refusal_names_its_key(
    entry: str, refused: str | None
) -> None:
    [notification] = from_yaml(f"notifications: [{entry}]")[0]["notifications"]

    found = refusal(notification)

    assert (found.at("notifications[0]")[: len(refused or "")] if found else None) == refused


@pytest.mark.parametrize("provider", ["GitHubPullRequest", "HipChat", "Campfire", "VSOTeamRoom", "Pager"])
def test_a_notification_provider_conveyor_does_not_send_is_refused_by_name(provider: str) -> None:
    text = f"notifications:\n  - provider: Email\n  - provider: {provider}\n    room: builds\n"
    email, other = from_yaml(text)[0]["notifications"]
    found = refusal(other)

    assert refusal(email) is None and found is not None
    assert found.at("notifications[1]").startswith(f"notifications[1].provider: {provider} notifications are not ")
    assert read_back(other) == other  # as a GET and a PUT of the settings send it back


def test_slack_and_teams_entries_keep_their_settings_as_written() -> None:
    text = (
        "notifications:\n  - provider: slack\n    auth_token:\n      secure: token\n    channel: '#builds'\n"
        "    template: '{{status}}'\n    on_build_failure: true\n"
        "  - provider: MicrosoftTeams\n    incoming_webhook: https://example.webhook.office.com/x\n"
    )
    configuration, _ = from_yaml(text)
    assert [entry["settings"] for entry in configuration["notifications"]] == [
        {"auth_token": {"secure": "token"}, "channel": "#builds", "template": "{{status}}"},
        {"incoming_webhook": "https://example.webhook.office.com/x"},
    ]
    assert from_yaml(to_yaml(configuration, None))[0] == configuration


def test_repeated_aliases_in_notification_settings_are_refused() -> None:
    text = "notifications:\n  - provider: Email\n    to: &to [a@example.com]\n    cc: *to\n"
    assert invalid_message(text).startswith("notifications[0].cc: ")


# --- the repository's own appveyor.yml at build time -------------------------------------------------------------

PROJECT = configuration(
    installScripts=[script("echo from project")],
    environmentVariables=[named("SHARED", "project"), named("PROJECT_ONLY", "p", secure=True)],
    notifications=[
        {
            "provider": "Email",
            "settings": {"to": ["p@example.com"]},
            "onBuildSuccess": False,
            "onBuildFailure": True,
            "onBuildStatusChanged": False,
        }
    ],
)


def test_the_repository_file_replaces_the_project_scripts() -> None:
    merged, _ = merge_repository_file(PROJECT, "1.0.{build}", "build_script: [make]")
    assert merged["installScripts"] == []
    assert (merged["buildMode"], merged["buildScripts"]) == ("script", [script("make")])


def test_a_project_variable_wins_over_the_files_variable_of_the_same_name() -> None:
    merged, _ = merge_repository_file(PROJECT, "1.0.{build}", "environment:\n  SHARED: file\n  FILE_ONLY: f\n")
    assert merged["environmentVariables"] == [
        named("SHARED", "project"),
        named("PROJECT_ONLY", "p", secure=True),
        named("FILE_ONLY", "f"),
    ]


def test_the_project_version_is_used_when_the_file_has_none() -> None:
    assert merge_repository_file(PROJECT, "3.{build}", "install: [x]")[1] == "3.{build}"


def test_the_files_version_is_used_when_it_has_one() -> None:
    assert merge_repository_file(PROJECT, "3.{build}", "version: 4.{build}")[1] == "4.{build}"


def test_notifications_are_the_projects_then_the_files_without_duplicates() -> None:
    text = (
        "notifications:\n  - provider: Email\n    to: [p@example.com]\n    on_build_failure: true\n"
        "  - provider: Slack\n    auth_token: {secure: token}\n    channel: builds\n"
    )
    merged, _ = merge_repository_file(PROJECT, "1.0.{build}", text)
    assert [notification["provider"] for notification in merged["notifications"]] == ["Email", "Slack"]


def test_merging_leaves_the_project_configuration_untouched() -> None:
    before = copy.deepcopy(PROJECT)
    merge_repository_file(PROJECT, "1.0.{build}", "environment: {NEW: x}")
    assert before == PROJECT


# AppVeyor's build modes as a word (its Build tab's MSBuild, Script, Off), in any case: real files write them.
BUILD_WORDS = {
    "build: Script": {"buildMode": "script"},
    "build: script\nbuild_script: [make]": {"buildMode": "script", "buildScripts": [script("make")]},
    "build: MSBuild": {},  # MSBuild mode, the mapping form's and the default: a Linux runner skips it, saying so
    "build: msbuild\nbuild_script: [make]": {"buildMode": "script", "buildScripts": [script("make")]},
    "build: Off": {"buildMode": "none"},
    "build: OFF\nbuild_script: [make]": {"buildMode": "none", "buildScripts": [script("make")]},
}


@pytest.mark.parametrize(("text", "fields"), BUILD_WORDS.items(), ids=BUILD_WORDS.keys())
def test_a_build_mode_written_as_appveyors_word_is_read_as_its_mapping_form_would_be(text: str, fields: Json) -> None:
    config, _ = from_yaml(text)

    assert changes(text) == fields
    assert round_trips(config)


def test_a_build_word_appveyor_does_not_have_is_refused_naming_the_modes() -> None:
    assert invalid_message("build: Make").startswith("build: ")
    assert "off, Script, MSBuild or a mapping" in invalid_message("build: Make")
