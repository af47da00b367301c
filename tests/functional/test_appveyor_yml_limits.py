"""What a repository's appveyor.yml may hold: its size, its values once aliases are expanded, its list of
configurations, its for: items and its matrix's condition rows. A file at each limit builds; one over it starts
nothing, a 400 from the API and `Not built: ...` from a webhook, naming the limit, before any matrix is made."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chalicelib.domain.configuration.matrix import MAX_CONDITION_KEYS, MAX_CONDITION_ROWS
from chalicelib.domain.configuration.yamlconfig import MAX_REPOSITORY_FILE_BYTES
from chalicelib.domain.configuration.yamlconfig.for_items import MAX_CONFIGURATIONS, MAX_FOR_ITEMS
from chalicelib.domain.configuration.yamlconfig.syntax import MAX_YAML_VALUES
from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_webhooks import HookProject, git_server, skipped
from tests.gitserver import GitServer
from tests.support import Account, Reply, assert_refused

__all__ = ["git_server"]  # the webhooks' fixture: hosted providers' URLs point at the test git server

SCRIPT = appveyor_yml("build_script:", "  - echo hi")


def of_size(size: int) -> str:
    """A file that builds, padded with a comment to exactly ``size`` bytes."""
    padding = size - len(SCRIPT.encode()) - len("#\n")
    text = SCRIPT + "#" + "x" * padding + "\n"
    assert len(text.encode()) == size
    return text


def with_configurations(count: int) -> str:
    """A list of ``count`` configurations, the last (without branches) the one a build of master chooses."""
    for_branches = [f"- branches: {{only: [branch-{index}]}}\n  build_script: [echo {index}]" for index in range(count)]
    return appveyor_yml(*for_branches[:-1], "- build_script: [echo chosen]")


def with_for_items(count: int) -> str:
    items = [
        f"  - matrix: {{only: [{{FLAVOR: plain}}]}}\n    environment: {{ITEM: '{index}'}}" for index in range(count)
    ]
    return appveyor_yml("environment:", "  matrix:", "    - FLAVOR: plain", "build_script: [echo hi]", "for:", *items)


def with_condition_rows(count: int) -> str:
    """``count`` exclusions, none of which excludes the build's one job."""
    rows = [f"    - {{ABSENT: '{index}'}}" for index in range(count)]
    return appveyor_yml("build_script: [echo hi]", "matrix:", "  exclude:", *rows)


def with_condition_keys(count: int) -> str:
    """Exclusions of ten keys each (the last row holding what is left), ``count`` keys in all, excluding nothing."""
    sizes = [10] * (count // 10) + ([count % 10] if count % 10 else [])
    rows = ["    - {" + ", ".join(f"K{key}: v" for key in range(size)) + "}" for size in sizes]
    return appveyor_yml("build_script: [echo hi]", "matrix:", "  exclude:", *rows)


# Each limit: a file of n of what it counts, the limit, and what the refusal of a file one over it says.
LIMITS: dict[str, tuple[Callable[[int], str], int, str]] = {
    "size": (of_size, MAX_REPOSITORY_FILE_BYTES, f"appveyor.yml is {MAX_REPOSITORY_FILE_BYTES + 1} bytes long"),
    "configurations": (with_configurations, MAX_CONFIGURATIONS, f"holds {MAX_CONFIGURATIONS + 1} configurations"),
    "for items": (with_for_items, MAX_FOR_ITEMS, f"for: {MAX_FOR_ITEMS + 1} items"),
    "condition rows": (with_condition_rows, MAX_CONDITION_ROWS, f"{MAX_CONDITION_ROWS + 1} condition rows"),
    "condition keys": (with_condition_keys, MAX_CONDITION_KEYS, f"have {MAX_CONDITION_KEYS + 1} keys in all"),
}


def start(account: Account, project: BuildProject, branch: str) -> Reply:
    body = {"accountName": account.name, "projectSlug": project.project["slug"], "branch": branch}
    return account.api.post("/builds", body)


@pytest.mark.parametrize("limit", LIMITS)
def test_an_appveyor_yml_at_a_limit_builds_and_one_over_it_is_refused_naming_the_limit(
    account: Account, git_server: GitServer, limit: str
) -> None:
    write, most, said = LIMITS[limit]
    project = BuildProject(account, git_server, {"appveyor.yml": write(most)})
    project.repository.commit({"appveyor.yml": write(most + 1)}, branch="over")

    at_limit, over = start(account, project, "master"), start(account, project, "over")

    assert at_limit.status == 200, at_limit.body
    message = assert_refused(over, 400)
    assert said in message and f"at most {most} " in message
    history = account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"]
    assert [build["branch"] for build in history] == ["master"]


@pytest.mark.parametrize("limit", LIMITS)
def test_a_push_of_an_appveyor_yml_over_a_limit_is_not_built_saying_which(
    account: Account, git_server: GitServer, limit: str
) -> None:
    write, most, said = LIMITS[limit]
    hook = HookProject(account, git_server, provider="git", yml=write(most + 1))

    message = skipped(hook.post({"ref": "refs/heads/master"}))

    assert message.startswith("Not built: ") and said in message and f"at most {most} " in message
    assert hook.builds() == []


# A dozen lines, each doubling the one before through merge keys: 2^30 values once expanded.
MERGE_BOMB = appveyor_yml(
    "x0: &x0 {a: 1, b: 2}",
    *(f"x{level}: &x{level} {{<<: [*x{level - 1}, *x{level - 1}]}}" for level in range(1, 30)),
    "build_script: [echo hi]",
)


def test_an_appveyor_yml_whose_aliases_expand_past_the_limit_is_refused_before_it_is_expanded(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": MERGE_BOMB})
    hook = HookProject(account, git_server, provider="git", yml=MERGE_BOMB)

    message = assert_refused(start(account, project, "master"), 400)
    pushed = skipped(hook.post({"ref": "refs/heads/master"}))
    as_settings = account.api.put(
        f"{project.path}/settings/yaml", raw=MERGE_BOMB.encode(), headers={"Content-Type": "text/plain"}
    )
    in_settings = assert_refused(as_settings, 400)

    limit = f"more than {MAX_YAML_VALUES} values once its aliases"
    assert limit in message and limit in in_settings
    assert pushed.startswith("Not built: ") and limit in pushed
