"""Which webhook events start a build: the configuration's filters over one pushed commit, without IO."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chalicelib.domain.configuration.filters import PushedCommit, skip_reason
from chalicelib.domain.configuration.yamlconfig import from_yaml
from chalicelib.errors import Invalid


def configuration(yaml_text: str) -> dict[str, Any]:
    cfg, _ = from_yaml(yaml_text)
    return cfg


def pushed(**fields: Any) -> PushedCommit:
    base: dict[str, Any] = {
        "branch": "master",
        "title": "Fix the parser",
        "author_name": "Ada Lovelace",
        "author_email": "ada@example.com",
    }
    return PushedCommit(**{**base, **fields})


NO_FILTERS = configuration("build_script:\n  - echo hi\n")


def test_a_plain_push_builds() -> None:
    assert skip_reason(NO_FILTERS, pushed()) is None


@pytest.mark.parametrize(
    ("title", "directive"),
    [("Docs [skip ci]", "[skip ci]"), ("[ci skip] docs", "[ci skip]"), ("Tweak [SKIP APPVEYOR]", "[skip appveyor]")],
)
def test_skip_directives_in_the_title_skip(title: str, directive: str) -> None:
    assert skip_reason(NO_FILTERS, pushed(title=title)) == f"Skipped: {directive} in the commit title."


def test_skip_ci_without_brackets_builds() -> None:
    assert skip_reason(NO_FILTERS, pushed(title="skip ci config")) is None


@pytest.mark.parametrize(
    ("yaml_text", "branch", "builds"),
    [
        ("branches:\n  only: [master]", "master", True),
        ("branches:\n  only: [master]", "dev", False),
        ("branches:\n  only: ['/release\\/.*/']", "release/1.2", True),
        ("branches:\n  only: ['/release\\/.*/']", "master", False),
        ("branches:\n  except: [gh-pages]", "gh-pages", False),
        ("branches:\n  except: ['/^wip-/']", "wip-parser", False),
        ("branches:\n  except: ['/^wip-/']", "master", True),
        ("branches:\n  only: ['/.*/']\n  except: [dev]", "dev", False),
    ],
)
def test_branch_lists_with_regular_expressions(yaml_text: str, branch: str, builds: bool) -> None:
    assert (skip_reason(configuration(yaml_text), pushed(branch=branch)) is None) is builds


def test_an_excluded_branch_names_the_list_that_excludes_it() -> None:
    reason = skip_reason(configuration("branches:\n  except: [gh-pages]"), pushed(branch="gh-pages"))
    assert reason == "Skipped: branch 'gh-pages' is excluded by branches.except."


def test_skip_tags_skips_tags_only() -> None:
    cfg = configuration("skip_tags: true")
    assert skip_reason(cfg, pushed(branch="v1.0", is_tag=True)) == "Skipped: tag 'v1.0' and skip_tags is set."
    assert skip_reason(cfg, pushed()) is None


def test_skip_non_tags_builds_tags_only() -> None:
    cfg = configuration("skip_non_tags: true")
    assert skip_reason(cfg, pushed()) == "Skipped: not a tag, and skip_non_tags is set."
    assert skip_reason(cfg, pushed(branch="v1.0", is_tag=True)) is None


@pytest.mark.parametrize(
    ("rule", "title", "skipped"),
    [("/\\[chore\\]/", "[chore] bump", True), ("/\\[chore\\]/", "Fix", False), ("WIP", "wip: parser", True)],
)
def test_skip_commits_message_looks_at_the_title(rule: str, title: str, skipped: bool) -> None:
    cfg = configuration(f"skip_commits:\n  message: '{rule}'")
    assert (skip_reason(cfg, pushed(title=title)) is not None) is skipped


@pytest.mark.parametrize(
    ("rule", "skipped"),
    [
        ("Ada Lovelace", True),
        ("ada lovelace", True),
        ("ada@example.com", True),
        ("/Ada|Bob/", True),
        ("Ada", False),
        ("/Charles/", False),
        ("ada-l", True),
    ],
)
def test_skip_commits_author_is_the_name_e_mail_or_login(rule: str, skipped: bool) -> None:
    cfg = configuration(f"skip_commits:\n  author: '{rule}'")
    assert (skip_reason(cfg, pushed(author_login="ada-l")) is not None) is skipped


def test_only_commits_builds_matching_commits_only() -> None:
    cfg = configuration("only_commits:\n  message: /build/\n  author: /Ada/")
    assert skip_reason(cfg, pushed(title="please build this")) is None
    assert skip_reason(cfg, pushed(title="docs")) == "Skipped: the commit title does not match only_commits.message."
    assert skip_reason(cfg, pushed(title="build", author_name="Bob", author_email="bob@example.com")) == (
        "Skipped: the commit's author does not match only_commits.author."
    )


@pytest.mark.parametrize(
    ("files", "skipped"),
    [
        (("docs/index.md",), True),
        (("docs/index.md", "README.md"), True),
        (("docs/index.md", "src/main.c"), False),
        (("notes/a/b.md",), True),
        ((), False),
        (None, False),
    ],
)
def test_skip_commits_files_skip_when_every_changed_file_matches(files: tuple[str, ...] | None, skipped: bool) -> None:
    cfg = configuration("skip_commits:\n  files:\n    - docs/\n    - '**/*.md'")
    assert (skip_reason(cfg, pushed(files=files)) is not None) is skipped


@pytest.mark.parametrize(
    ("files", "builds"),
    [(("src/main.c",), True), (("docs/a.md", "src/lib/x.c"), True), (("docs/a.md",), False), (None, True)],
)
def test_only_commits_files_build_when_any_changed_file_matches(files: tuple[str, ...] | None, builds: bool) -> None:
    cfg = configuration("only_commits:\n  files:\n    - src/*\n    - src/**/*.c")
    assert (skip_reason(cfg, pushed(files=files)) is None) is builds


def test_skip_branch_with_pr_skips_the_branch_push_not_the_pull_request() -> None:
    cfg = configuration("skip_branch_with_pr: true")
    assert skip_reason(cfg, pushed(branch="feature", branch_has_pull_request=True)) is not None
    assert skip_reason(cfg, pushed(branch="feature")) is None
    assert skip_reason(cfg, pushed(branch="master", pull_request_id=7, branch_has_pull_request=True)) is None
    assert skip_reason(NO_FILTERS, pushed(branch="feature", branch_has_pull_request=True)) is None


def test_a_pull_request_is_filtered_by_its_target_branch() -> None:
    cfg = configuration("branches:\n  only: [master]")
    assert skip_reason(cfg, pushed(branch="master", pull_request_id=3)) is None
    assert skip_reason(cfg, pushed(branch="dev", pull_request_id=3)) is not None


# Catastrophic patterns: a backtracking engine never finishes ^(a+)+$ against forty a's and a "!", nor thirty
# "**/" against a deep path. Each attack runs in a child process, so against such an engine it fails on the
# timeout instead of hanging the tests.
def filter_in_a_child(yaml_text: str, *commits: PushedCommit) -> list[str]:
    """skip_reason of each commit under the configuration, computed in a child process."""
    script = (
        "from chalicelib.domain.configuration.filters import PushedCommit, skip_reason\n"
        "from chalicelib.domain.configuration.yamlconfig import from_yaml\n"
        f"cfg, _ = from_yaml({yaml_text!r})\n"
        f"for commit in {list(commits)!r}:\n"
        "    print(skip_reason(cfg, commit))\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=Path(__file__).resolve().parents[4],
    )
    assert child.returncode == 0, child.stderr
    return child.stdout.splitlines()


def test_a_catastrophic_skip_commits_pattern_answers_at_once() -> None:
    reasons = filter_in_a_child(
        "skip_commits:\n  message: /^(a+)+$/",
        PushedCommit(branch="master", title="a" * 40 + "!"),
        PushedCommit(branch="master", title="a" * 40),
    )

    assert reasons == ["None", "Skipped: the commit title matches skip_commits.message."]


def test_file_globs_cannot_stall_on_a_deep_path() -> None:
    reasons = filter_in_a_child(
        "skip_commits:\n  files:\n    - '" + "**/" * 30 + "x.md'",
        PushedCommit(branch="master", title="Work", files=("a/" * 200 + "y.c",)),
        PushedCommit(branch="master", title="Docs", files=("a/" * 200 + "x.md",)),
    )

    assert reasons == ["None", "Skipped: every changed file matches skip_commits.files."]


@pytest.mark.parametrize(
    ("rule", "refused"),
    [("/(?<=x)a/", "(?<="), ("/(a)\\1/", "\\1"), ("/(?!wip)/", "(?!")],
)
def test_a_pattern_re2_cannot_run_is_refused_naming_it(rule: str, refused: str) -> None:
    with pytest.raises(Invalid) as error:
        configuration(f"branches:\n  only: ['{rule}']")

    assert rule in error.value.message and refused in error.value.message
    assert "branches.only" in error.value.message


def test_a_stored_pattern_re2_cannot_run_fails_the_filter_not_the_service() -> None:
    cfg = {**NO_FILTERS, "skipCommitsMessage": "/(?<=x)a/"}  # saved before patterns were checked

    with pytest.raises(Invalid, match=r"\(\?<=x\)a"):
        skip_reason(cfg, pushed())
