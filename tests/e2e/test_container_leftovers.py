"""A container job's processes die with the stack that runs it: ``conveyor local`` killed outright (SIGKILL, the
OOM killer) leaves no container of its jobs running, whatever the build started in it (as root too), and the next
stack removes the job folder it left.

The job's runner dies with the stack (its parent-death signal), the container's first process then reads the end
of its commands and ends, and the kernel kills everything left in the container's PID namespace.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import requests

from chalicelib.executors import containers
from tests.e2e.test_local_stack import LocalStack, finished
from tests.functional.test_sandbox import host_processes_with, wait_for
from tests.gitserver import GitServer, Repository
from tests.support import unique

REFUSAL = containers.refusal()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")


def start_build(stack: LocalStack, git_server: GitServer, yml: str) -> tuple[requests.Session, str]:
    """A project of ``yml`` on ``stack`` and a build of it started: the stack's session and the build's URL."""
    name = unique("killed") + ".git"
    Repository.create(git_server.root, name).commit({"appveyor.yml": yml})
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {stack.key}"
    added = api.post(
        f"{stack.base_url}/api/projects",
        json={"repositoryProvider": "git", "repositoryName": git_server.url_of(name)},
        timeout=60,
    )
    assert added.status_code == 200, added.text
    slug = added.json()["slug"]
    started = api.post(f"{stack.base_url}/api/builds", json={"accountName": "local", "projectSlug": slug}, timeout=30)
    assert started.status_code == 200, started.text
    return api, f"/api/projects/local/{slug}/build/{started.json()['version']}"


def test_a_container_jobs_processes_die_with_a_stack_killed_outright(tmp_path: Path, git_server: GitServer) -> None:
    detached, rooted = f"600.{random.randrange(10**8, 10**9)}", f"600.{random.randrange(10**8, 10**9)}"
    yml = (
        "build_script:\n"
        f"  - setsid sleep {detached} > /dev/null 2>&1 &\n"
        f"  - sudo setsid sh -c 'sleep {rooted} & exit 0' > /dev/null 2>&1 & sleep 1\n"
        "  - sleep 600\n"
    )
    stack = LocalStack.start(tmp_path / "stack", CONVEYOR_CONTAINERS="auto").wait_until_ready()
    try:
        start_build(stack, git_server, yml)
        seen_running = wait_for(lambda: host_processes_with(detached) and host_processes_with(rooted), seconds=60)
    finally:
        stack.process.kill()
        stack.process.wait()
    left = list(containers.JOBS_ROOT.glob(f"{stack.process.pid}-*"))

    assert seen_running, f"the job's processes were never seen running: the test proves nothing\n{stack.stderr}"
    assert wait_for(lambda: not host_processes_with(detached) and not host_processes_with(rooted), seconds=20), (
        f"the killed stack's job is still running: {host_processes_with(detached)}, {host_processes_with(rooted)}"
    )
    assert left, "the killed stack left no job folder: what follows proves nothing"
    after = LocalStack.start(tmp_path / "after", CONVEYOR_CONTAINERS="auto").wait_until_ready()
    try:  # the next stack removes it as it starts its first container job
        _, url = start_build(after, git_server, "build_script:\n  - echo next\n")
        build: dict[str, Any] = finished(after, url, "build", seconds=120)
    finally:
        after.stop()
    assert build["status"] == "success"
    assert [folder for folder in left if folder.exists()] == []
