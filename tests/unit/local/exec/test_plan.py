"""Which jobs conveyor exec runs and each one's spec (chalicelib/local/exec/plan.py): the service's reading of
appveyor.yml for the branch, secure values unset unless given, images exec does not provide skipped."""

from __future__ import annotations

import pytest

from chalicelib.core.os_types import is_windows
from chalicelib.domain.projects.projects import slugify
from chalicelib.errors import Invalid
from chalicelib.local.exec import wine
from chalicelib.local.exec.plan import Checkout, Plan, job_spec, plan, slug

CHECKOUT = Checkout(
    name="My App",
    branch="feature/x",
    ref="refs/heads/feature/x",
    commit={"commitId": "a" * 40, "message": "Add x", "authorName": "Ann", "authorEmail": "ann@example.com"},
)


def planned(text: str, given: dict[str, str] | None = None, cache: bool = False) -> Plan:
    return plan(text, CHECKOUT, given or {}, cache=cache)


def test_jobs_are_named_and_numbered_as_the_service_names_them() -> None:
    built = planned("environment:\n  matrix:\n    - FLAVOUR: vanilla\n    - FLAVOUR: chocolate\nplatform: [x64]\n")

    assert [(job.number, job.name) for job in built.jobs] == [
        (1, "Environment: FLAVOUR=vanilla; Platform: x64"),
        (2, "Environment: FLAVOUR=chocolate; Platform: x64"),
    ]
    assert built.version == "1.0.1"


def test_a_build_of_one_job_has_no_name_and_is_called_job_1() -> None:
    (job,) = planned("build_script:\n  - make\n").jobs

    assert (job.name, job.title) == ("", "job 1")


def test_the_list_forms_configuration_for_the_branch_is_the_one_read() -> None:
    text = (
        "- branches: {only: [main]}\n  build_script: [echo main]\n"
        "- branches: {only: [/feature/]}\n  build_script: [echo feature]\n"
    )
    built = planned(text)
    spec = job_spec(built.jobs[0], built, CHECKOUT, "http://127.0.0.1:1/git/s", {})

    assert [script["script"] for script in spec["configuration"]["buildScripts"]] == ["echo feature"]


def test_a_for_item_selecting_a_job_changes_that_job_only() -> None:
    built = planned(
        "environment:\n  matrix:\n    - FLAVOUR: a\n    - FLAVOUR: b\nbuild_script: [echo common]\n"
        "for:\n  - matrix: {only: [{FLAVOUR: b}]}\n    build_script: [echo only-b]\n"
    )
    scripts = [
        [s["script"] for s in job_spec(job, built, CHECKOUT, "", {})["configuration"]["buildScripts"]]
        for job in built.jobs
    ]

    assert scripts == [["echo common"], ["echo only-b"]]


def test_a_secure_variable_is_unset_said_once_and_given_it_is_set_and_masked() -> None:
    text = "environment:\n  KEY: {secure: c2VjcmV0}\n  PLAIN: shown\n  matrix:\n    - FLAVOUR: a\n    - FLAVOUR: b\n"
    unset = planned(text)
    given = planned(text, {"KEY": "from-the-command-line"})
    unset_spec = job_spec(unset.jobs[0], unset, CHECKOUT, "", {})
    given_spec = job_spec(given.jobs[0], given, CHECKOUT, "", {"KEY": "from-the-command-line"})

    assert [note for note in unset.notes if "KEY" in note] == [
        "Secure variable KEY is not set: secure values are decrypted by the service only. Give it with "
        "-e KEY=VALUE to set it here."
    ]
    assert "KEY" not in unset_spec["variables"] and unset_spec["variables"]["PLAIN"] == "shown"
    assert not [note for note in given.notes if "KEY" in note]
    assert given_spec["variables"]["KEY"] == "from-the-command-line"
    assert given_spec["secrets"] == ["from-the-command-line"]


def test_a_given_variable_overrides_the_files_and_the_build_variables_are_the_services() -> None:
    built = planned("environment:\n  MODE: file\n")
    variables = job_spec(built.jobs[0], built, CHECKOUT, "", {"MODE": "given"})["variables"]

    assert variables["MODE"] == "given"
    assert variables["APPVEYOR_REPO_BRANCH"] == "feature/x"
    assert variables["APPVEYOR_REPO_COMMIT"] == "a" * 40
    assert variables["APPVEYOR_PROJECT_SLUG"] == "my-app"
    assert variables["APPVEYOR_FORCED_BUILD"] == "True"
    assert "APPVEYOR_URL" not in variables


@pytest.mark.parametrize("name", ["My App", "  ", "Ünïcode ∂ name", "a" * 80 + "-b", "x--y__z"])
def test_the_slug_is_the_services(name: str) -> None:
    assert slug(name) == slugify(name)


def test_windows_images_without_wine_and_images_exec_does_not_provide_are_skipped_and_ubuntu_ones_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wine, "missing", lambda: "Wine is not installed here: `make windows` installs it")
    built = planned("image:\n  - Ubuntu2204\n  - Visual Studio 2022\n  - python:3.12\n  - ubuntu\n")

    assert [job.skipped is None for job in built.jobs] == [True, False, False, True]
    assert "'Visual Studio 2022' is a Windows image: Wine is not installed" in str(built.jobs[1].skipped)
    assert "does not provide the image 'python:3.12'" in str(built.jobs[2].skipped)


def test_a_windows_image_runs_where_wine_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wine, "missing", lambda: None)

    (job,) = planned("image: Visual Studio 2019\n").jobs

    assert job.skipped is None and is_windows(job.image)


def test_services_the_image_gives_run_and_others_fail_the_job_at_once_as_the_service_refuses_them() -> None:
    (given,) = planned("services: [mysql]\nbuild_script: [echo]\n").jobs
    (refused,) = planned("services: [mongodb]\nbuild_script: [echo]\n").jobs

    assert given.refused is None
    assert refused.refused is not None and "mongodb" in refused.refused


def test_the_cache_is_off_unless_asked_and_said_so() -> None:
    text = "cache:\n  - node_modules\n"
    off, on = planned(text), planned(text, cache=True)

    assert job_spec(off.jobs[0], off, CHECKOUT, "", {})["configuration"]["cacheEntries"] == []
    assert any(note.startswith("cache: off") for note in off.notes)
    assert job_spec(on.jobs[0], on, CHECKOUT, "", {}, cache=True)["configuration"]["cacheEntries"] != []
    assert not any(note.startswith("cache:") for note in on.notes)


def test_a_filter_that_would_skip_a_push_is_said_and_the_jobs_run() -> None:
    built = planned("branches:\n  only: [main]\nbuild_script: [echo]\n")

    assert len(built.jobs) == 1
    assert any("a push would start no build" in note for note in built.notes), built.notes


def test_a_file_the_service_refuses_is_refused() -> None:
    with pytest.raises(Invalid, match="unknown appveyor.yml setting"):
        planned("no_such_setting: 1\n")


def test_clone_script_gives_way_to_the_working_tree_saying_so() -> None:
    built = planned("clone_script:\n  - git clone https://example.com/app.git .\n")

    assert job_spec(built.jobs[0], built, CHECKOUT, "", {})["configuration"]["cloneScripts"] == []
    assert any(note.startswith("clone_script: not run by conveyor exec") for note in built.notes)


def test_the_repository_is_named_by_its_remote_as_a_git_project_is_without_its_credentials() -> None:
    remote = Checkout(**{**CHECKOUT.__dict__, "repository": "https://ann:hunter2@git.example.com/team/app.git"})
    built = planned("build_script: [echo]\n")

    variables = job_spec(built.jobs[0], built, remote, "", {})["variables"]

    assert variables["APPVEYOR_REPO_NAME"] == "https://git.example.com/team/app.git"
    assert variables["APPVEYOR_REPO_PROVIDER"] == "git"
