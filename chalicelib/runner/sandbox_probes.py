"""What the sandbox's runner, a user of no rights, cannot read on this machine: its own code (a clone made with umask
077), or a local repository a project names. Asked when the stack starts and when such a project is added, so
that builds are refused saying why rather than failing one by one (runner/sandbox.py makes the sandbox)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from chalicelib.runner import sandbox


def unreadable_code() -> str | None:
    """Why the runner, dropped to a user of no rights, could not read its own code here (a clone made with umask
    077: its folders of mode 0700); None when it can, or when it runs as the stack's own user."""
    if os.geteuid() != 0:
        return None
    project = sandbox.PROJECT_DIR
    runner = project / "chalicelib" / "runner" / "job.py"
    code = [project, runner.parent.parent, runner, Path(sys.prefix), Path(sys.prefix, "pyvenv.cfg")]
    for path in code:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        needed = stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)
        if mode & needed != needed:
            return (
                f"Builds cannot run: their runner runs as nobody, and {path} is not readable by other users (mode "
                f"{stat.S_IMODE(mode):04o}, as a clone made with umask 077 is). Make it readable (chmod -R o+rX "
                f"{project if path.is_relative_to(project) else path}) or clone again with umask 022."
            )
    return None


def unreadable_repository(path: str) -> str | None:
    """Why a job's runner, in its sandbox, could not read the local repository at ``path``; None when it can (or
    when jobs run without one, as the stack's own user). Whether the folder exists is asked as nobody too, and a
    missing folder gets the same answer as one nobody cannot read: the service's own user (root) would tell a
    project's creator which folders of this machine exist."""
    made = sandbox.sandbox()
    if not isinstance(made, sandbox.Sandbox):
        return None if os.path.isdir(path) else _unreadable(path)
    # the same folder (an emptied /tmp is readable, and another), readable, its .git too
    readable = (
        'cd -- "$1" 2>/dev/null && test -r . && { [ ! -e .git ] || { test -r .git && test -x .git; }; } '
        "&& stat -L -c %d:%i ."
    )
    try:
        probe = subprocess.run(
            [*made.prefix, "/bin/sh", "-c", readable, "probe", path],
            env=sandbox.environment(), capture_output=True, timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None  # no answer is no refusal: the build says why if it cannot
    if probe.returncode != 0:
        return _unreadable(path)
    try:
        outside = os.stat(path)  # nobody reached a folder there: that it exists tells nothing new
    except OSError:
        return _unreadable(path)
    if probe.stdout.decode().strip() == f"{outside.st_dev}:{outside.st_ino}":
        return None
    return _unreadable(path)


def _unreadable(path: str) -> str:
    """One refusal for a missing folder and one builds cannot read."""
    home = os.path.realpath(os.path.expanduser("~"))
    emptied = ", ".join([*sandbox.PRIVATE_FOLDERS, *sandbox.PRIVATE_IF_PRESENT, home])
    return (
        f"Builds cannot read {path}: there is no repository there, or their runner, which runs as nobody in a "
        f"sandbox that empties {emptied}, and folders other users may not enter, cannot read it. Keep the "
        "repository where every user may read it outside those, as in "
        f"{sandbox.PROJECT_DIR / 'out'}/ (this stack's own folder stays visible to builds, read-only)."
    )
