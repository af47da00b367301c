"""The runner function's handler (chalicelib/runner/aws_lambda.py) runs one job per execution environment.

Each run of the handler is a child process in a PID namespace of its own, as a Lambda execution environment is a
machine of its own, so the handler's ``os.kill(-1)`` meets that namespace's processes only. The namespace's first
process stands in for Lambda's init: it starts the handler and, once the handler has ended, reports which
processes are left. The ticket is made here as chalicelib/domain/execution/dispatch.py makes it (no pump dispatches the
job), and the handler calls the API over loopback, as the runner function calls the deployed one.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib.config import settings
from chalicelib.domain.execution import progress
from chalicelib.domain.job_identity.job_tokens import mint_token
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.sandbox import NOBODY, code_reachable
from chalicelib.store import job_moves
from chalicelib.store import jobs as job_store
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account

NAMESPACES = ("--pid", "--fork", "--kill-child", "--mount-proc", "--mount")
FUNCTION_NAME = "conveyor-test-runner"  # Lambda sets AWS_LAMBDA_FUNCTION_NAME; the handler kills only where it is
# The namespace's first process. It runs the handler only as PID 1 of a new PID namespace: the handler kills every
# process it may signal, which outside one would be every process of this machine. It reaps what the handler
# killed, then writes which processes are left (but itself) to the report file.
INIT = """
import json, os, subprocess, sys, time
if os.getpid() != 1:
    sys.exit("refused: this is not the first process of a new PID namespace")
report, command = sys.argv[1], sys.argv[2:]
ended = subprocess.run(command, check=False).returncode

def alive():
    found = []
    for pid in [name for name in os.listdir("/proc") if name.isdigit() and name != "1"]:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
            argv = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode().strip()
        except OSError:
            continue
        if state != "Z":
            found.append(argv)
    return found

deadline = time.monotonic() + 2  # a SIGKILLed process ends soon after the signal, not with it
while True:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    left = alive()
    if not left or time.monotonic() > deadline:
        break
    time.sleep(0.05)
with open(report, "w") as file:
    json.dump({"handlerExit": ended, "left": left}, file)
"""
HANDLER = (
    "import json, sys; from chalicelib.runner.aws_lambda import handler; handler(json.loads(sys.argv[1]), None); "
    "sys.exit('the handler returned: it must end its process')"
)


@pytest.fixture(scope="module")
def namespace() -> tuple[str, ...]:
    """unshare's command line for a new PID namespace, as root or in a user namespace; the tests skip without."""
    candidates = [("unshare", *NAMESPACES)] if os.geteuid() == 0 else []
    candidates.append(("unshare", "--user", "--map-root-user", *NAMESPACES))
    reasons = []
    for prefix in candidates:
        probe_command = [*prefix, "--", sys.executable, "-I", "-c", "import os, sys; sys.exit(os.getpid() != 1)"]
        try:
            probe = subprocess.run(probe_command, capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            reasons.append(str(error))
            continue
        if probe.returncode == 0:
            return prefix
        reasons.append(probe.stderr.decode(errors="replace").strip()[:300] or f"exit code {probe.returncode}")
    pytest.skip(f"unshare cannot make a PID namespace here (it needs root or user namespaces): {'; '.join(reasons)}")


@pytest.fixture(scope="module", autouse=True)
def fast_heartbeat() -> Iterator[None]:
    """The API tells runners to heartbeat twice a second, so a finished job's runner need not wait 5 s to end."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONVEYOR_HEARTBEAT_SECONDS", "0.5")
        yield


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """The handler's /tmp (its TMPDIR): empty when it starts, as it would be in a new execution environment."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


def dispatched(project: BuildProject, api_url: str) -> tuple[str, Ticket]:
    """Start a build and claim its job as chalicelib/domain/execution/dispatch.py does; its version and the job's
    ticket."""
    version = project.start()["version"]
    job_id = project.build(version)["jobs"][0]["jobId"]
    token = mint_token()
    assert job_moves.claim_job(job_id, int(time.time()) + settings().lease_seconds, token.token_hash)
    job = job_store.get_job(job_id)
    assert job is not None
    progress.refresh_build(job.project_id, job.build_id)
    return version, Ticket(api_url, job_id, token.token)


def run_handler(namespace: tuple[str, ...], ticket: Ticket, scratch: Path, user: int | None = None) -> dict[str, Any]:
    """Invoke the handler with ``ticket`` in a new PID namespace (as ``user``, else as this process's user); what
    the namespace's init reported."""
    report = scratch.parent / f"report-{ticket.job_id}.json"
    handler = [sys.executable, "-I", "-c", HANDLER, ticket.to_json()]
    if user is not None:  # as the sandbox drops to nobody (chalicelib/runner/sandbox.py)
        handler = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *handler]
        # the function runs a package of the runner's code; here, that code may be in a clone nobody may enter
        handler = ["/bin/sh", "-c", f'{code_reachable()} && exec "$@"', "handler", *handler]
    # As in the runner function: no setting of the service, no AWS endpoint; only the ticket and a /tmp.
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(scratch), "AWS_LAMBDA_FUNCTION_NAME": FUNCTION_NAME}
    command = [*namespace, "--", sys.executable, "-I", "-c", INIT, str(report), *handler]
    subprocess.run(command, env=env, cwd="/", timeout=120, check=True)
    return dict(json.loads(report.read_text()))


def processes_running(argv: str) -> list[int]:
    """This machine's processes whose command line is ``argv``."""
    found = []
    for pid in [name for name in os.listdir("/proc") if name.isdigit()]:
        try:
            if (Path("/proc") / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip() == argv:
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_the_handler_reports_its_job_then_kills_what_the_build_left_and_ends_its_process(
    namespace: tuple[str, ...], api_url: str, account: Account, git_server: GitServer, scratch: Path, tmp_path: Path
) -> None:
    sleeper = f"sleep {600_000 + secrets.randbelow(100_000)}"  # this test's own: no other process has its argv
    pid_file = tmp_path / "sleeper.pid"
    yml = appveyor_yml(
        "build_script:",
        f"  - setsid {sleeper} >/dev/null 2>&1 & echo $! > {pid_file}",  # a session of its own: the script's
        f"  - echo secret > {scratch}/left-behind",  # process group is killed, this is not in it
        "test_script:",
        f'  - kill -0 "$(cat {pid_file})"',  # the sleeper outlived its script: the handler must end it
        f"  - test -e {scratch}/left-behind",
    )
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    version, ticket = dispatched(project, api_url)

    report = run_handler(namespace, ticket, scratch)

    build = project.build(version)
    assert build["status"] == "success", project.log(ticket.job_id)  # reported before the handler ended
    assert build["jobs"][0]["status"] == "success"
    assert report == {"handlerExit": 0, "left": []}  # os._exit(0), and nothing of the build outlived the handler
    assert pid_file.exists()
    assert processes_running(sleeper) == []
    assert list(scratch.iterdir()) == []  # the job's folder and what the build wrote in /tmp


def test_a_second_job_in_the_same_scratch_folder_finds_nothing_of_the_first(
    namespace: tuple[str, ...], api_url: str, account: Account, git_server: GitServer, scratch: Path
) -> None:
    first = BuildProject(
        account, git_server, {"appveyor.yml": appveyor_yml("build_script:", f"  - echo secret > {scratch}/left-behind")}
    )
    version, ticket = dispatched(first, api_url)
    assert run_handler(namespace, ticket, scratch)["handlerExit"] == 0
    assert first.build(version)["status"] == "success", first.log(ticket.job_id)
    assert list(scratch.iterdir()) == []
    # What a handler killed before it could clean up (Lambda's timeout) would leave: the next one empties /tmp first.
    (scratch / "planted").write_text("token of an earlier job")

    second = BuildProject(
        account,
        git_server,
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                f"  - ls -A {scratch}",
                f"  - test ! -e {scratch}/left-behind",
                f"  - test ! -e {scratch}/planted",
                f'  - test "$(ls -A {scratch} | wc -l)" -eq 1',  # its own job folder only
            )
        },
    )
    version, ticket = dispatched(second, api_url)
    assert run_handler(namespace, ticket, scratch)["handlerExit"] == 0
    assert second.build(version)["status"] == "success", second.log(ticket.job_id)
    assert list(scratch.iterdir()) == []


@pytest.fixture
def scratch_of_nobody() -> Iterator[Path]:
    """A /tmp for a handler run as ``nobody``, as Lambda runs its function as a user of no rights: the tests of
    modes a build set need it (root removes a folder of mode 000 and all in it anyway). Outside pytest's folders,
    which only root may enter."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("running the handler as nobody needs root and setpriv")
    folder = Path(tempfile.mkdtemp(prefix="conveyor-scratch-"))
    os.chown(folder, NOBODY, NOBODY)
    yield folder
    for inner in [folder, *folder.rglob("*")]:  # as root: no mode stops this
        if inner.is_dir() and not inner.is_symlink():
            inner.chmod(0o700)
    shutil.rmtree(folder)


def test_a_build_cannot_leave_unreadable_folders_in_the_scratch_for_the_next_job(
    namespace: tuple[str, ...], api_url: str, account: Account, git_server: GitServer, scratch_of_nobody: Path
) -> None:
    scratch = scratch_of_nobody
    yml = appveyor_yml(
        "build_script:",
        # as Go's module cache is: read-only folders with files in them
        f"  - mkdir -p {scratch}/gomodcache/pkg/mod/example.com/m@v1 && echo token > {scratch}/gomodcache/pkg/mod/x",
        f"  - echo secret > {scratch}/gomodcache/pkg/mod/example.com/m@v1/go.mod",
        f"  - chmod -R a-w {scratch}/gomodcache",
        # and a folder no one may list or enter, files inside, under one only readable
        f"  - mkdir -p {scratch}/closed/locked && echo secret > {scratch}/closed/locked/token",
        f"  - chmod 000 {scratch}/closed/locked && chmod 0500 {scratch}/closed",
        f"  - test ! -w {scratch}/gomodcache/pkg",
    )
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    version, ticket = dispatched(project, api_url)

    report = run_handler(namespace, ticket, scratch, user=NOBODY)

    assert project.build(version)["status"] == "success", project.log(ticket.job_id)
    assert report == {"handlerExit": 0, "left": []}
    assert list(scratch.iterdir()) == []


def test_a_job_never_starts_on_a_scratch_folder_its_runner_could_not_empty(
    namespace: tuple[str, ...], api_url: str, account: Account, git_server: GitServer, scratch_of_nobody: Path
) -> None:
    scratch = scratch_of_nobody
    # what the runner's user can never remove: another user's file in another user's folder
    (scratch / "stuck").mkdir()
    (scratch / "stuck" / "token").write_text("token of an earlier job")
    ran = scratch / "the-script-ran"
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", f"  - touch {ran}")})
    version, ticket = dispatched(project, api_url)

    report = run_handler(namespace, ticket, scratch, user=NOBODY)

    assert report["handlerExit"] != 0  # the invocation failed: Lambda counts it as an error
    assert not ran.exists()
    build = project.build(version)
    assert build["jobs"][0]["status"] == "failed"
    log = project.log(ticket.job_id)
    assert "could not be emptied" in log and "stuck" not in log  # an earlier job's file names are not this job's
