"""appveyor.yml's list of configurations and its for: items: which configuration a branch gets, AppVeyor's merge
rules for each kind of setting, the items that specialise jobs, and where a mistake is named."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.domain.configuration import filters, job_overrides
from chalicelib.domain.configuration.matrix import matrix_jobs
from chalicelib.domain.configuration.yamlconfig import from_yaml, merge_repository_file, read_repository_file
from chalicelib.errors import Invalid

Json = dict[str, Any]


def named(name: str, value: str) -> Json:
    return {"name": name, "value": {"isEncrypted": False, "value": value}}


def script(text: str) -> Json:
    return {"language": "cmd", "script": text}


def read(text: str, branch: str = "main") -> Json:
    configuration, _ = read_repository_file(text, branch)
    return configuration


def refusal(text: str, branch: str = "main") -> str:
    with pytest.raises(Invalid) as refused:
        read_repository_file(text, branch)
    return refused.value.message


def variables(configuration: Json) -> dict[str, str]:
    return {variable["name"]: variable["value"].get("value") for variable in configuration["environmentVariables"]}


# --- the list form: a selector, not a filter ---------------------------------------------------------------------

LIST = """
- branches: {only: [main]}
  install: [echo main]
- branches: {only: ['/^release-/']}
  install: [echo release]
- branches: {except: [main, '/^wip-/']}
  install: [echo not wip]
- install: [echo fallback]
"""


@pytest.mark.parametrize(
    ("branch", "chosen"),
    [
        ("main", "echo main"),  # only names it (also listed in the except item: only comes first)
        ("release-2", "echo release"),  # only, as a regex
        ("feature", "echo not wip"),  # no only names it; the except item does not exclude it
        ("wip-x", "echo fallback"),  # excluded by the except item: the one without branches
    ],
)
def test_a_list_of_configurations_gives_each_branch_the_first_that_selects_it(branch: str, chosen: str) -> None:
    assert read(LIST, branch)["installScripts"] == [script(chosen)]


def test_a_list_with_no_configuration_for_the_branch_builds_nothing_and_says_why() -> None:
    message = refusal("- branches: {only: [main]}\n  install: [x]\n", "feature")
    assert "none of its 1 configurations is for branch 'feature'" in message


def test_every_configuration_of_the_list_is_checked_chosen_or_not() -> None:
    text = "- branches: {only: [main]}\n  install: [x]\n- instal: [y]\n"
    assert refusal(text).startswith("[1].instal: unknown appveyor.yml setting")


def test_a_list_item_that_is_no_mapping_is_named() -> None:
    assert refusal("- install: [x]\n- just text\n").startswith("[1]: expected a mapping")


def test_the_chosen_configuration_has_its_own_version_and_for_items() -> None:
    text = (
        "- version: 2.{build}\n  environment: {A: list}\n"
        "  for:\n    - branches: {only: [main]}\n      environment: {A: for}\n"
    )
    configuration, version = read_repository_file(text, "main")
    assert (variables(configuration), version) == ({"A": "for"}, "2.{build}")


# --- for: items for branches: AppVeyor's merge rules ---------------------------------------------------------------

COMMON = """
configuration: Debug
install: [echo common]
environment:
  SHARED: common
  COMMON_ONLY: c
  matrix:
    - ROW: one
matrix:
  fast_finish: false
  allow_failures:
    - ROW: one
artifacts:
  - path: bin
deploy:
  - provider: Webhook
    url: https://example.com/common
notifications:
  - provider: Email
    to: [common@example.com]
"""


def with_item(*lines: str) -> str:
    return COMMON + "for:\n  - branches:\n      only: [main]\n" + "".join(f"    {line}\n" for line in lines)


def test_an_item_for_another_branch_changes_nothing() -> None:
    assert read(with_item("configuration: Release"), "feature") == read(COMMON, "feature")


def test_scalars_and_scripts_of_the_item_replace_the_common_ones() -> None:
    configuration = read(with_item("configuration: Release", "install: [echo main]", "clone_depth: 3"))
    assert configuration["configuration"] == [{"value": "Release"}]
    assert configuration["installScripts"] == [script("echo main")]
    assert configuration["cloneDepth"] == 3


def test_a_setting_the_item_sets_back_to_its_default_still_replaces() -> None:
    text = "skip_tags: true\nfor:\n  - branches: {only: [main]}\n    skip_tags: false\n"
    assert read(text)["skipTags"] is False


def test_environment_variables_merge_by_name_the_items_winning() -> None:
    configuration = read(with_item("environment:", "  SHARED: main", "  MAIN_ONLY: m"))
    assert variables(configuration) == {"SHARED": "main", "COMMON_ONLY": "c", "MAIN_ONLY": "m"}


def test_matrix_rows_and_conditions_are_added_and_fast_finish_replaced() -> None:
    configuration = read(
        with_item(
            "environment:",
            "  matrix:",
            "    - ROW: two",
            "matrix:",
            "  fast_finish: true",
            "  exclude:",
            "    - ROW: x",
        )
    )
    assert [row["variables"][0]["value"]["value"] for row in configuration["environmentVariablesMatrix"]] == [
        "one",
        "two",
    ]
    assert configuration["matrixFastFinish"] is True
    assert len(configuration["matrixAllowFailures"]) == 1 and len(configuration["matrixExclude"]) == 1


def test_artifacts_and_deployments_are_added() -> None:
    configuration = read(with_item("artifacts:", "  - path: docs", "deploy:", "  - provider: Webhook", "    url: u"))
    assert [artifact["path"] for artifact in configuration["artifacts"]] == ["bin", "docs"]
    assert len(configuration["deployments"]) == 2 and configuration["deployMode"] == "providers"


@pytest.mark.parametrize("off", ["off", "none"])
def test_off_or_none_clears_artifacts_deploy_and_notifications(off: str) -> None:
    configuration = read(with_item(f"artifacts: {off}", f"deploy: {off}", f"notifications: {off}"))
    assert (configuration["artifacts"], configuration["deployments"], configuration["notifications"]) == ([], [], [])
    assert configuration["deployMode"] == "none"


def test_the_items_notifications_replace_the_common_ones() -> None:
    configuration = read(with_item("notifications:", "  - provider: Email", "    to: [main@example.com]"))
    assert [entry["settings"]["to"] for entry in configuration["notifications"]] == [["main@example.com"]]


def test_phases_the_item_does_not_name_keep_their_mode() -> None:
    text = "build_script: [make]\ntest: off\nfor:\n  - branches: {only: [main]}\n    install: [x]\n"
    configuration = read(text)
    assert (configuration["buildMode"], configuration["testMode"]) == ("script", "none")


def test_the_items_version_replaces_the_files() -> None:
    text = "version: 1.{build}\nfor:\n  - branches: {only: [main]}\n    version: 9.{build}\n"
    assert read_repository_file(text, "main")[1] == "9.{build}"
    assert read_repository_file(text, "other")[1] == "1.{build}"


def test_one_item_applies_chosen_as_in_the_list_an_item_without_branches_being_the_fall_back() -> None:
    text = (
        "install: [echo common]\nfor:\n"
        "  - install: [echo fallback]\n"
        "  - branches: {except: [main]}\n    install: [echo not main]\n"
        "  - branches: {only: [main]}\n    install: [echo main]\n"
        "  - branches: {only: [main]}\n    install: [echo main again]\n"
    )
    assert read(text, "main")["installScripts"] == [script("echo main")]
    assert read(text, "feature")["installScripts"] == [script("echo not main")]


def test_the_branch_of_a_tag_build_is_the_tags_name() -> None:
    text = "for:\n  - branches: {only: ['/^v\\d/']}\n    environment: {RELEASE: 'yes'}\n"
    assert variables(read(text, "v1.0")) == {"RELEASE": "yes"}


def test_project_variables_still_win_over_the_items() -> None:
    project = {"environmentVariables": [named("SHARED", "project")]}
    merged, _ = merge_repository_file(project, "1.{build}", with_item("environment:", "  SHARED: main"), "main")
    assert variables(merged)["SHARED"] == "project"


def test_a_mistake_in_an_item_names_it_whichever_branch_is_built() -> None:
    text = "for:\n  - branches: {only: [main]}\n    install: 5\n"
    assert refusal(text, "other").startswith("for[0].install: ")
    assert refusal("for:\n  - branches: {ony: [main]}\n").startswith("for[0].branches.ony: ")
    assert refusal("for:\n  - branches: {only: [main]}\n    for: []\n").startswith("for[0].for: ")
    assert refusal("for: [5]").startswith("for[0]: expected a mapping")


def test_one_configuration_is_read_without_a_branch_and_says_so_for_a_list_or_for_items() -> None:
    # a project's settings YAML takes both, read for a branch
    # (read_settings_yaml: tests/unit/domain/configuration/test_yamlconfig.py)
    with pytest.raises(Invalid) as listed:
        from_yaml("- install: [x]")
    assert "a list of configurations is read for a branch" in listed.value.message
    with pytest.raises(Invalid) as items:
        from_yaml("for:\n  - branches: {only: [main]}\n    install: [x]")
    assert items.value.message.startswith("for: ")


# --- for: items for jobs (matrix only/except) ---------------------------------------------------------------------

JOBS = """
image: [Ubuntu, Ubuntu2204]
configuration: [Debug, Release]
environment:
  SHARED: common
test_script: [echo common]
for:
  - matrix:
      only:
        - image: Ubuntu2204
          configuration: Release
    environment:
      SHARED: special
      EXTRA: x
    test_script: [echo special]
    platform: x64
    notifications:
      - provider: Email
        to: [jobs@example.com]
  - matrix:
      except:
        - configuration: Debug
    branches:
      only: [main]
    skip_commits:
      message: /docs only/
"""


def specs_of(text: str, branch: str = "main") -> tuple[Json, list[Any]]:
    configuration = read(text, branch)
    return configuration, matrix_jobs(configuration)


def test_job_items_select_jobs_by_their_matrix_rows() -> None:
    _, specs = specs_of(JOBS)
    assert [(spec.image, spec.configuration, spec.overrides) for spec in specs] == [
        ("Ubuntu", "Debug", ()),
        ("Ubuntu", "Release", (1,)),
        ("Ubuntu2204", "Debug", ()),
        ("Ubuntu2204", "Release", (0, 1)),
    ]


def test_a_job_item_specialises_its_jobs_only() -> None:
    configuration, specs = specs_of(JOBS)
    special = job_overrides.job_configuration(configuration, {"overrides": list(specs[3].overrides)})
    plain = job_overrides.job_configuration(configuration, {"overrides": list(specs[0].overrides)})
    assert special["testScripts"] == [script("echo special")]
    assert variables(special) == {"SHARED": "special", "EXTRA": "x"}
    assert plain["testScripts"] == [script("echo common")] and variables(plain) == {"SHARED": "common"}


def test_a_job_stored_before_for_items_runs_with_its_builds_configuration() -> None:
    configuration, _ = specs_of(JOBS)
    assert job_overrides.job_configuration(configuration, {"image": "Ubuntu", "variables": []}) is configuration


def test_what_appveyor_ignores_in_a_job_item_is_named_in_its_jobs_log() -> None:
    configuration, specs = specs_of(JOBS)
    (warning,) = job_overrides.job_warnings(configuration, {"overrides": list(specs[3].overrides)})
    assert warning.startswith("appveyor.yml for[0]: platform not applied to this job")
    assert job_overrides.job_warnings(configuration, {"overrides": []}) == []


def test_a_job_items_notifications_join_the_builds_when_it_selects_a_job() -> None:
    configuration, specs = specs_of(JOBS)
    assert [entry["provider"] for entry in job_overrides.with_job_notifications(configuration, specs)["notifications"]]
    assert job_overrides.with_job_notifications(configuration, specs[:1])["notifications"] == []


def pushed(branch: str, title: str = "A change") -> filters.PushedCommit:
    return filters.PushedCommit(branch=branch, title=title)


def test_a_job_items_filters_skip_only_its_jobs_numbering_the_rest_again() -> None:
    configuration, specs = specs_of(JOBS, "feature")
    kept = job_overrides.unskipped(configuration, specs, pushed("feature"))
    assert [(spec.number, spec.configuration) for spec in kept] == [(1, "Debug"), (2, "Debug")]
    on_main = job_overrides.unskipped(configuration, specs, pushed("main", "fix: docs only"))
    assert [spec.configuration for spec in on_main] == ["Debug", "Debug"]
    assert len(job_overrides.unskipped(configuration, specs, pushed("main"))) == 4


def test_a_build_whose_every_job_is_skipped_says_why() -> None:
    text = "for:\n  - matrix: {except: [{configuration: x}]}\n    skip_tags: true\n"
    configuration, specs = specs_of(text, "v1")
    with pytest.raises(Invalid) as refused:
        job_overrides.unskipped(configuration, specs, filters.PushedCommit(branch="v1", title="t", is_tag=True))
    assert "for[0]: Skipped: tag 'v1' and skip_tags is set." in refused.value.message


def test_a_project_variable_wins_over_a_job_items_too() -> None:
    project = {"environmentVariables": [named("SHARED", "project")]}
    merged, _ = merge_repository_file(project, "1.{build}", JOBS, "main")
    specs = matrix_jobs(merged)
    special = job_overrides.job_configuration(merged, {"overrides": list(specs[3].overrides)})
    assert variables(special) == {"SHARED": "project", "EXTRA": "x"}


def test_a_mistake_in_a_job_item_is_named() -> None:
    assert refusal("for:\n  - matrix: {only: [5]}\n").startswith("for[0].matrix.only[0]: ")
    assert refusal("for:\n  - matrix: {only: [{image: x}]}\n    test_script: 5\n").startswith("for[0].test_script: ")
