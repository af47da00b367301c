"""Where no sandbox can be made, builds do not run unsandboxed by default: each job fails saying why. With the
explicit unsafe setting they run, and every build log says, first thing, that it ran without a sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chalicelib.local.pump import SqsPump
from chalicelib.runner import sandbox as local
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This machine, as one where unshare may make no namespace."""
    monkeypatch.setattr(local, "sandbox", lambda: "unshare: unshare failed: Operation not permitted")
    yield


def test_without_a_sandbox_a_build_fails_saying_why_and_runs_nothing(
    account: Account, git_server: GitServer, pump: SqsPump, no_sandbox: None
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")})

    build = project.run()

    assert build["status"] == "failed"
    job = build["jobs"][0]
    assert job["status"] == "failed" and job["messagesCount"] == 1
    messages = project.account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    assert [(m["category"], m["message"][:47]) for m in messages] == [
        ("error", "Builds cannot run: no sandbox could be made on ")
    ]
    assert "CONVEYOR_UNSAFE_NO_SANDBOX=true" in messages[0]["message"]
    assert "Operation not permitted" in messages[0]["message"]


def test_without_a_sandbox_the_unsafe_setting_runs_builds_with_a_warning_in_every_log(
    account: Account, git_server: GitServer, pump: SqsPump, no_sandbox: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_UNSAFE_NO_SANDBOX", "true")
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo ran")})

    build = project.run()

    assert build["status"] == "success"
    log = project.log(build["jobs"][0]["jobId"])
    assert log.startswith(local.UNSAFE_WARNING)
    assert "\nran\n" in log
