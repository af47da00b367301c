"""A ``git`` project may name a repository on this machine where the stage allows it (``local``): only one its
builds can read, from their sandbox as ``nobody``; a repository they could not read is refused when added, saying
which folders they can read (before, it was accepted and every build failed).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.runner import sandbox as local
from tests.support import Account, add_project, assert_refused

SANDBOX = local.sandbox()
pytestmark = pytest.mark.skipif(isinstance(SANDBOX, str), reason=f"no sandbox can be made here: {SANDBOX}")


def repository_in(folder: Path) -> Path:
    """A bare repository ``widget.git`` in ``folder``, readable by every user (as git makes it)."""
    repository = folder / "widget.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repository)], check=True)
    return repository


@pytest.fixture
def out_folder() -> Iterator[Path]:
    """A folder of this project's out/ (ignored by git), every user's to read: where the README keeps one."""
    out = local.PROJECT_DIR / "out"
    out.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="repositories-", dir=out))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=True)


@pytest.mark.parametrize("as_url", [False, True])
def test_a_local_repository_builds_can_read_is_taken(account: Account, out_folder: Path, as_url: bool) -> None:
    repository = repository_in(out_folder)
    name = f"file://{repository}" if as_url else str(repository)

    project = add_project(account, name, "git")

    assert project["repositoryName"] == name
    assert project["name"] == "widget"


def test_a_repository_in_tmp_is_refused_saying_which_folders_builds_cannot_read(
    account: Account, tmp_path: Path
) -> None:
    repository = repository_in(tmp_path)

    reply = account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": str(repository)})

    message = assert_refused(reply, 400)
    assert f"Builds cannot read {repository}" in message and "/tmp" in message
    assert str(local.PROJECT_DIR / "out") in message
    assert account.api.get("/projects").json == []


@pytest.mark.parametrize("emptied", ["/tmp", "/var/tmp"])
def test_a_folder_the_sandbox_empties_is_refused_though_its_empty_stand_in_is_readable(
    account: Account, emptied: str
) -> None:
    reply = account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": emptied})

    assert f"Builds cannot read {emptied}" in assert_refused(reply, 400)


@pytest.mark.skipif(os.geteuid() != 0, reason="as another user, the sandbox reads what that user may")
def test_a_repository_in_a_folder_others_may_not_enter_is_refused(account: Account, out_folder: Path) -> None:
    repository = repository_in(out_folder)
    out_folder.chmod(0o700)

    reply = account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": str(repository)})

    assert f"Builds cannot read {repository}" in assert_refused(reply, 400)


def test_a_project_cannot_be_moved_to_a_repository_builds_cannot_read(
    account: Account, out_folder: Path, tmp_path: Path
) -> None:
    project = add_project(account, str(repository_in(out_folder)), "git")
    moved = repository_in(tmp_path)

    reply = account.api.put("/projects", {**project, "repositoryName": str(moved)})

    assert f"Builds cannot read {moved}" in assert_refused(reply, 400)
    assert account.api.get(f"/projects/{project['accountName']}/{project['slug']}").json["project"][
        "repositoryName"
    ] == str(out_folder / "widget.git")


def test_a_repository_that_does_not_exist_is_refused_saying_so(account: Account, out_folder: Path) -> None:
    missing = out_folder / "typo.git"

    reply = account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": f"file://{missing}"})

    message = assert_refused(reply, 400)
    assert f"Builds cannot read {missing}" in message and "there is no repository there" in message


@pytest.mark.skipif(os.geteuid() != 0, reason="as another user, the sandbox reads what that user may")
def test_a_missing_folder_and_one_builds_cannot_read_are_refused_alike(account: Account, out_folder: Path) -> None:
    """The service looks as nobody: its answer tells a project's creator nothing of folders builds cannot see."""
    repository = repository_in(out_folder)
    out_folder.chmod(0o700)
    missing = out_folder / "typo.git"

    unreadable = assert_refused(
        account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": str(repository)}), 400
    )
    absent = assert_refused(
        account.api.post("/projects", {"repositoryProvider": "git", "repositoryName": str(missing)}), 400
    )

    assert absent == unreadable.replace(str(repository), str(missing))
