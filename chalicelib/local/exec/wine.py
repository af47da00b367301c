"""A Windows job of ``conveyor exec``, run as a Windows build agent runs it, under Wine (docs/exec.md).

Where this checkout has Wine and the Windows CPython (``make windows``, as root, installs both into ``.windows/``, as
for the Windows agent's tests), the job's runner is started as the agent starts it: the Windows CPython runs
``chalicelib.runner.windows`` (runner/windows/host.run_runner: a workspace and a Job Object of the job's own) with
the job's ticket on its stdin, and the runner talks to exec's in-process job protocol on 127.0.0.1, which Wine's
processes share with this machine. There is no sandbox: the job's scripts run as the user running exec, and can
read and change what that user can (Wine's ``Z:`` drive is this machine's ``/``), as on a Windows build agent.

Wine has no Git for Windows: the job's files, the snapshot's tree, are written to a temporary folder which the
job's ``clone_script`` copies into its build folder. Wine's processes get no variable of exec's environment but
PATH, HOME and Wine's own: no credential of the machine's reaches the job through it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from dulwich.objects import ObjectID
from dulwich.repo import MemoryRepo

from chalicelib.executors.containers import PROJECT_DIR
from chalicelib.protocol.job_spec import JobSpec
from chalicelib.protocol.ticket import Ticket

WINDOWS = PROJECT_DIR / ".windows"
PYTHON = WINDOWS / "python" / "python.exe"
MAX_LINES_SAID = 20  # of a failed runner's output
NOTICE = (
    "This Windows job runs under Wine with no sandbox: its scripts run as you and can read and change what you can "
    "on this machine."
)


def missing() -> str | None:
    """Why a Windows job cannot run here, and how to make it run; None when it can."""
    if shutil.which("wine") and PYTHON.is_file() and (WINDOWS / "prefix").is_dir():
        return None
    return (
        "conveyor exec runs Windows jobs under Wine, and Wine or the Windows CPython is not installed here: "
        f"`make windows`, as root, in {PROJECT_DIR} installs both"
    )


def clone_script(files: Path) -> dict[str, str]:
    """The job's clone_script: the snapshot's files, from ``files`` (seen through Wine's Z: drive) into the build
    folder, hidden ones included."""
    source = "Z:" + str(files).replace("/", "\\")
    return {"language": "cmd", "script": f'xcopy "{source}\\*" . /e /h /k /q /y > nul'}


def write_tree(repository: MemoryRepo, tree_id: ObjectID, into: Path) -> None:
    """The tree's regular files under ``into`` (links and submodules are left out: Windows has neither here)."""
    for entry in repository.object_store.iter_tree_contents(tree_id):
        if entry.path is None or entry.mode is None or entry.sha is None or not stat.S_ISREG(entry.mode):
            continue
        parts = PurePosixPath(entry.path.decode("utf-8", "surrogateescape")).parts
        if not parts or any(part in ("", ".", "..") for part in parts):
            continue
        target = into.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(repository.object_store[entry.sha].as_raw_string())


def run_job(
    spec: JobSpec, repository: MemoryRepo, tree_id: ObjectID, ticket: Ticket, timeout: float, say: Callable[[str], None]
) -> int:
    """Run the job of ``spec`` under Wine, its files the tree's; the runner's exit code."""
    with tempfile.TemporaryDirectory(prefix="conveyor-exec-windows-") as folder:
        write_tree(repository, tree_id, Path(folder))
        spec["configuration"]["cloneScripts"] = [clone_script(Path(folder))]
        return run(ticket, timeout, say)


def run(ticket: Ticket, timeout: float, say: Callable[[str], None]) -> int:
    """Run the ticket's job's runner under Wine, as the Windows agent does, and wait for it; its exit code. What the
    runner printed (its log goes through the job protocol) is said only when it failed."""
    environment = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.environ.get("HOME", tempfile.gettempdir()),
        "WINEPREFIX": str(WINDOWS / "prefix"),
        "WINEDEBUG": "-all",
    }
    command = ["wine", str(PYTHON), "-I", "-m", "chalicelib.runner.windows", str(int(timeout))]
    # Wine's Python cannot start with a standard stream on /dev/null: each is a pipe
    process = subprocess.Popen(
        command, env=environment, cwd=WINDOWS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        printed, _ = process.communicate(ticket.to_json().encode(), timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        process.kill()  # the runner's Job Object ends what it holds with it
        printed, _ = process.communicate()
    if process.returncode != 0:
        for line in printed.decode(errors="replace").splitlines()[-MAX_LINES_SAID:]:
            say(line)
    return process.returncode
