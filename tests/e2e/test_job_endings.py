"""A job that ends for a reason outside its script says that reason, as its message and its log's last line (issue 43,
section 3), on the local stack (``make run``): its runner killed outright (a real SIGKILL of the runner process),
and the stack itself killed while the build ran, then started again: the build does not stay running, it fails
saying the service stopped, and running it again works.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from chalicelib.domain.execution.lost_jobs import STACK_STOPPED
from chalicelib.executors import containers
from tests.e2e.test_container_leftovers import start_build
from tests.e2e.test_local_stack import LocalStack, finished
from tests.functional.test_sandbox import wait_for
from tests.gitserver import GitServer

RUNNING = "JOB-IS-RUNNING"
YML = (
    "build_script:\n"
    f"  - echo {RUNNING}\n"
    '  - if [ "$APPVEYOR_RE_RUN_INCOMPLETE" != True ]; then sleep 600; fi\n'
    "  - echo DONE\n"
)


def runner_processes_of(stack: LocalStack) -> list[int]:
    """The job runners this stack started (the Python process, not the sandbox's wrappers around it)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        python = b"python" in Path(argv[0].decode()).name.encode()
        if b"chalicelib.runner" in argv and python and _descends_from(int(name), stack.process.pid):
            found.append(int(name))
    return found


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the parent's pid, after the command's name
    return False


def log_of(stack: LocalStack, api: requests.Session, job_id: str) -> str:
    return api.get(f"{stack.base_url}/api/buildjobs/{job_id}/log", timeout=30).text


def running_job(stack: LocalStack, api: requests.Session, url: str) -> dict[str, Any]:
    """The build's job once its first command has printed."""
    job: dict[str, Any] = {}

    def printed() -> bool:
        job.update(api.get(f"{stack.base_url}{url}", timeout=10).json()["build"]["jobs"][0])
        return RUNNING in log_of(stack, api, job["jobId"]).splitlines()

    assert wait_for(printed, seconds=120), f"the job never ran its first command\n{stack.stderr}"
    return job


# where the stack runs its jobs: the unshare sandbox, and containers where they can run here
WHERE = [
    "off",
    pytest.param("auto", marks=pytest.mark.skipif(containers.refusal() is not None, reason="no containers here")),
]


def last_line(log: str) -> str:
    return log.rstrip("\n").rsplit("\n", 1)[-1]


@pytest.mark.parametrize("containers_setting", WHERE)
def test_a_job_whose_runner_is_killed_fails_naming_the_signal(
    tmp_path: Path, git_server: GitServer, containers_setting: str
) -> None:
    stack = LocalStack.start(tmp_path / "stack", CONVEYOR_CONTAINERS=containers_setting).wait_until_ready()
    try:
        api, url = start_build(stack, git_server, YML)
        job = running_job(stack, api, url)
        runners = runner_processes_of(stack)
        assert len(runners) == 1, runners
        os.kill(runners[0], signal.SIGKILL)
        build = finished(stack, url, "build", seconds=60)
        log = log_of(stack, api, job["jobId"])
    finally:
        stack.stop()

    message = build["jobs"][0]["message"]
    assert build["status"] == "failed", build
    assert message == "The job's runner was killed (SIGKILL) before it finished the job; the job failed."
    assert last_line(log) == message, log


@pytest.mark.parametrize("containers_setting", WHERE)
def test_a_build_running_when_the_stack_is_killed_fails_saying_so_and_runs_again(
    tmp_path: Path, git_server: GitServer, containers_setting: str
) -> None:
    state, where = tmp_path / "state", {"CONVEYOR_CONTAINERS": containers_setting}
    stack = LocalStack.start(tmp_path / "first", CONVEYOR_STATE_DIR=str(state), **where).wait_until_ready()
    try:
        api, url = start_build(stack, git_server, YML)
        job = running_job(stack, api, url)
    finally:
        stack.process.kill()  # SIGKILL: nothing of it can say goodbye
        stack.process.wait()
    time.sleep(0.5)

    again = LocalStack.start(tmp_path / "again", CONVEYOR_STATE_DIR=str(state), **where).wait_until_ready()
    try:
        api.headers["Authorization"] = f"Bearer {again.key}"
        build = finished(again, url, "build", seconds=30)
        log = log_of(again, api, job["jobId"])
        rerun = api.put(
            f"{again.base_url}/api/builds", json={"buildId": build["buildId"], "reRunIncomplete": True}, timeout=30
        )
        assert rerun.status_code == 200, rerun.text
        after = finished(again, url, "build", seconds=120)
        after_log = log_of(again, api, job["jobId"])
    finally:
        again.stop()

    assert build["status"] == "failed", build
    assert build["jobs"][0]["message"] == STACK_STOPPED
    assert last_line(log) == STACK_STOPPED, log
    assert "were running when this stack last stopped" in again.stdout
    assert after["status"] == "success", after_log
    assert "DONE" in after_log.splitlines()
