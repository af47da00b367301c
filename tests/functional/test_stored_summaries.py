"""A project keeps its newest build's summary in the store's own form; items written before kept the API's JSON of
the build. Those still show the same, and `conveyor migrate` rewrites them (issue 20: nothing persists an
API-shaped snapshot)."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.migrations import migrate
from chalicelib.store.models import ProjectModel
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account


def listed(account: Account, slug: str) -> dict[str, Any]:
    return next(project for project in account.api.get("/projects").json if project["slug"] == slug)


def test_a_summary_stored_as_the_api_showed_it_reads_the_same_and_the_migration_rewrites_it(
    account: Account, git_server: GitServer
) -> None:
    files = {"appveyor.yml": appveyor_yml("version: 2.3.{build}", "build_script:", "  - echo hi")}
    project = BuildProject(account, git_server, files, message="Add it\n\nWith a body.")
    project.start()
    slug = project.project["slug"]
    shown = listed(account, slug)
    item = ProjectModel.get(shown["accountId"], slug)
    item.update(actions=[ProjectModel.last_build.set(shown["builds"][0])])  # as the code before wrote it

    before_migration = listed(account, slug)
    first, second = migrate(), migrate()
    after_migration = listed(account, slug)

    assert shown["builds"][0]["version"] == "2.3.1" and shown["builds"][0]["messageExtended"] == "With a body."
    assert before_migration == shown and after_migration == shown
    assert first["last build summaries"] >= 1 and second["last build summaries"] == 0
    stored = ProjectModel.get(shown["accountId"], slug).last_build
    assert stored["form"] == 2 and "buildId" not in stored and stored["build_id"] == shown["builds"][0]["buildId"]


def test_a_summary_no_version_wrote_leaves_the_project_readable_without_a_last_build(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    project.start()
    slug = project.project["slug"]
    item = ProjectModel.get(project.project["accountId"], slug)
    item.update(actions=[ProjectModel.last_build.set({"buildId": "not a number"})])

    listed_now = listed(account, slug)
    read = account.api.get(project.path)

    assert listed_now["builds"] == []
    assert read.status == 200 and read.json["build"]["buildNumber"] == 1  # the build itself is read from its item
