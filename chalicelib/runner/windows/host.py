"""A build agent on Windows running one job's runner: in a workspace of the job's own, inside a Job Object.

There is no sandbox on Windows here, as on AppVeyor's "Process" cloud: the runner and the job's scripts run as the
agent's user. The runner's environment is the agent's without the agent's own settings (its key is never in it),
with the job's workspace and the folder build folders may take. The Job Object is made to end what it holds when its
last handle closes: a timeout ends the whole tree at once, and so does the agent's own end (killed, or stopped). The
workspace is removed afterwards, read-only git files and long paths included.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from chalicelib.runner.protocol import Ticket
from chalicelib.runner.windows.workspace import PROJECTS_ROOT_VARIABLE, WORKSPACE_VARIABLE, remove_tree

log = logging.getLogger(__name__)


def runner_environment(machine: Mapping[str, str], workspace: Path, projects_root: str | None) -> dict[str, str]:
    """The runner's environment: the machine's, without any ``CONVEYOR_*`` setting of the agent (its key among them),
    and the job's workspace (and the root build folders may take, where the agent's owner allows one)."""
    environment = {name: value for name, value in machine.items() if not name.upper().startswith("CONVEYOR_")}
    environment[WORKSPACE_VARIABLE] = str(workspace)
    if projects_root:
        environment[PROJECTS_ROOT_VARIABLE] = projects_root
    return environment


def runner_command() -> list[str]:
    """The runner, with this Python (``-I``: the machine's PYTHON* variables change nothing)."""
    return [sys.executable, "-I", "-m", "chalicelib.runner"]


def run_runner(ticket: Ticket, timeout: float, workspaces: Path, projects_root: str | None) -> int:
    """Run the ticket's job and wait for it; the runner's exit code. The workspace is removed afterwards."""
    from chalicelib.runner.windows.jobobject import JobObject

    workspace = workspaces / f"job-{ticket.job_id}"
    remove_tree(workspace)
    workspace.mkdir(parents=True)
    try:
        with JobObject() as job:
            process = job.start(
                runner_command(),
                stdin=subprocess.PIPE,
                env=runner_environment(os.environ, workspace, projects_root),
                cwd=workspace,
            )
            assert process.stdin is not None
            try:
                process.stdin.write(ticket.to_json().encode())
                process.stdin.close()
            except OSError:
                log.warning("job %s: the runner ended before it read its ticket", ticket.job_id)
            try:
                return process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                job.terminate()  # the runner and every process of the job
                return process.wait()
    finally:
        try:
            remove_tree(workspace)
        except OSError as error:  # a file a process outside the job holds open: the agent goes on to the next job
            log.warning("job %s: its workspace %s could not be removed: %s", ticket.job_id, workspace, error)
