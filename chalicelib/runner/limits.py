"""A container job's limits as its runner watches them: memory (the container's cgroup killed a process of it) and
disk (the job's own file system is full). Either stops the job, which ends failed saying which limit it hit.

The executor sets the limits (executors/containers.py, executors/job_disk.py); the runner only notices them being
hit, a few times a second while a command runs and after each command, and says so in the job's log and message.
"""

from __future__ import annotations

import os
from pathlib import Path

from chalicelib.runner.container import Limits

EXCEEDED = "over its limits"  # the stop reason; the message says which
# where podman puts a container's memory cgroup: cgroup v1 or v2, podman's own cgroup manager or systemd's
CGROUPS = (
    "/sys/fs/cgroup/memory/libpod_parent/libpod-{id}/memory.oom_control",
    "/sys/fs/cgroup/memory/machine.slice/libpod-{id}.scope/memory.oom_control",
    "/sys/fs/cgroup/libpod_parent/libpod-{id}/memory.events",
    "/sys/fs/cgroup/machine.slice/libpod-{id}.scope/memory.events",
)


def memory_message(memory_mb: int) -> str:
    """What a job that went past its memory limit says."""
    return (
        f"The job used more than {memory_mb} MB of memory, its limit (CONVEYOR_JOB_MEMORY_MB): a process of it was "
        "killed, and the job stopped."
    )


def disk_message(disk_mb: int) -> str:
    """What a job that filled its disk says."""
    return (
        f"The job used more than {disk_mb} MB of disk, its limit (CONVEYOR_JOB_DISK_MB): its build folder, /tmp, "
        "$HOME and the image's other folders share it, and the job stopped."
    )


class LimitWatch:
    """Whether a container job went past one of its limits."""

    def __init__(self, limits: Limits, work: Path, cgroups: tuple[str, ...] = CGROUPS) -> None:
        self._limits, self._work, self._cgroups = limits, work, cgroups
        self._events: str | None = None  # the container's memory cgroup file that counts its OOM kills

    def exceeded(self) -> str | None:
        """Why the job must stop (a limit it went past), or None."""
        if self._oom_kills() > 0:
            return memory_message(self._limits.memory_mb)
        if disk_full(self._work, self._limits.disk_mb):
            return disk_message(self._limits.disk_mb)
        return None

    def _oom_kills(self) -> int:
        if self._events is None:
            try:
                container_id = Path(self._limits.id_file).read_text().strip()
            except OSError:
                return 0  # not started yet
            if not container_id.isalnum():
                return 0
            found = [path.format(id=container_id) for path in self._cgroups]
            found = [path for path in found if os.path.exists(path)]
            if not found:
                return 0
            self._events = found[0]
        try:
            lines = Path(self._events).read_text().splitlines()
        except OSError:
            return 0  # the container has ended
        counts = [line.split()[1] for line in lines if line.startswith("oom_kill ")]
        return int(counts[0]) if counts and counts[0].isdigit() else 0


def disk_full(folder: Path, size_mb: int) -> bool:
    """Whether the job's disk at ``folder`` has (next to) no room left: less than 2 MB, or 2 % of a small one."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < min(2 * 1024 * 1024, size_mb * 1024 * 1024 // 50)
