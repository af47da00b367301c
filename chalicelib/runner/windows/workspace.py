"""Where a job's files are on a Windows build agent, and removing them after it.

The agent gives each job a workspace of its own (``CONVEYOR_WORKSPACE``) and removes it when the runner has ended.
The build folder is ``<workspace>\\build``; where the agent's owner allows a root for build folders
(``conveyor agent --builds --projects C:\\projects``, handed as ``CONVEYOR_PROJECTS_ROOT``), it is
``<root>\\<project slug>`` as on AppVeyor's images, or the job's ``clone_folder`` when that lies below the root. A
build folder outside the workspace is emptied before the job and removed after it, so it is never one that is not
below the root (the workspace's is used instead, and the log says why).
"""

from __future__ import annotations

import ntpath
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORKSPACE_VARIABLE = "CONVEYOR_WORKSPACE"
PROJECTS_ROOT_VARIABLE = "CONVEYOR_PROJECTS_ROOT"


def build_folder(work: Path, slug: str, clone_folder: str | None, root: str | None, say: Callable[[str], None]) -> Path:
    """The job's build folder (not made yet): see the module's docstring; the log says when clone_folder is not
    used, and why."""
    if root:
        base = ntpath.normpath(root)
        if clone_folder:
            wanted = ntpath.normpath(ntpath.join(base, clone_folder))
            if _below(wanted, base):
                return Path(wanted)
            say(f"clone_folder {clone_folder} is not used: this build agent lets builds use folders below {base} only.")
        name = slug if slug not in ("", ".", "..") else "project"
        folder = ntpath.normpath(ntpath.join(base, name))
        if _below(folder, base):
            return Path(folder)
        # the runner takes the slug from the service (runner/job_environment.py); what is removed stays below the root
        say(
            f"The build folder is {work / 'build'}: the project slug {slug} leads out of {base}, and this build agent "
            f"lets builds use folders below {base} only."
        )
        return work / "build"
    if clone_folder:
        say(
            f"clone_folder {clone_folder} is not used: this build agent gives builds no folder of their own (its "
            f"owner allows one with --projects); the build folder is {work / 'build'}."
        )
    return work / "build"


def _below(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it, as Windows compares names (ignoring case)."""
    path, root = ntpath.normcase(path), ntpath.normcase(root).rstrip("\\")
    return path.startswith(root + "\\") and ".." not in path.split("\\")


def long_path(path: Path | str) -> str:
    """The path in the form Windows reads past 260 characters (``\\\\?\\C:\\...``); as it is elsewhere."""
    text = os.path.abspath(str(path))
    if os.name != "nt" or text.startswith("\\\\?\\"):
        return text
    return "\\\\?\\UNC\\" + text[2:] if text.startswith("\\\\") else "\\\\?\\" + text


def remove_tree(path: Path | str) -> None:
    """Remove a folder and everything in it: read-only files (Git's packs) made writable first, long paths too."""
    target = long_path(path)
    if not os.path.lexists(target):
        return

    def writable_then_again(function: Callable[..., Any], name: str, _: Any) -> None:
        os.chmod(name, stat.S_IWRITE | stat.S_IREAD)
        function(name)

    # onerror, not 3.12's onexc: the agent runs on Python 3.11 too
    shutil.rmtree(target, onerror=writable_then_again)
