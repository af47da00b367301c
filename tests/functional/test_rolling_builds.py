"""Rolling builds with a runner: a push stops the branch's running build, not only its queued ones.

Apart from test_webhooks.py, where no runner runs, because the queue pump runs for the rest of a module.
"""

from __future__ import annotations

import time

from chalicelib.local.pump import SqsPump
from tests.builds import appveyor_yml
from tests.functional.test_webhooks import HookProject, git_server, github_headers, github_push, started
from tests.gitserver import GitServer
from tests.support import Account

__all__ = ["git_server"]  # the fixture whose hosted providers' URLs point at the local git server

SLOW = appveyor_yml("build_script:", "  - echo slow build started", "  - sleep 60")


def test_rolling_builds_stop_the_branchs_running_build(account: Account, git_server: GitServer, pump: SqsPump) -> None:
    project = HookProject(account, git_server, yml=SLOW)
    project.configure(rollingBuilds=True)
    first = started(project.post(github_push("refs/heads/master", project.head), github_headers("push")))
    wait_for_status(project, first["buildId"], {"running"})
    sha = project.repository.commit({"appveyor.yml": SLOW, "n": "1"}, message="Newer")

    second = started(project.post(github_push("refs/heads/master", sha), github_headers("push")))

    try:
        wait_for_status(project, first["buildId"], {"cancelled"})
        wait_for_status(project, second["buildId"], {"queued", "running"})  # the push's own build goes on
    finally:
        project.account.api.delete(f"/builds/{second['buildId']}")  # spares the pump a minute of sleep


def wait_for_status(project: HookProject, build_id: int, statuses: set[str], seconds: float = 20) -> str:
    """The build's status once it is one of ``statuses``; fails the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        status: str = next(build["status"] for build in project.builds() if build["buildId"] == build_id)
        if status in statuses or time.monotonic() > deadline:
            assert status in statuses, f"build {build_id} is {status}, not {statuses} after {seconds} s"
            return status
        time.sleep(0.2)
