"""The job's container as the runner sees it, when the container executor runs the job (executors/containers.py).

The runner stays outside the container, on the machine's side: it talks to the service, fetches the source (with
the repository's credentials, which never enter the container), collects artifacts and the cache from the job's
folder, and serves the Build Worker API on a unix socket. The container holds the job's folder (bound in at
``/home/appveyor/projects``), the runner's ``appveyor`` command, that socket, and the job's one Bash session, whose
commands and output travel on two descriptors the executor hands the runner (``commandsFd``, ``outputFd``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOME = "/home/appveyor"  # the build's user, as on AppVeyor's Linux images
PROJECTS = f"{HOME}/projects"  # APPVEYOR_BUILD_FOLDER is PROJECTS/<slug>, as AppVeyor sets it on Linux
BIN = "/opt/appveyor/bin"  # the runner's ``appveyor`` command (the image links /usr/local/bin/appveyor to it)
SOCKET_FOLDER = "/run/conveyor"  # the Build Worker API's unix socket
API_PORT = 8008  # where the container's first process serves the Build Worker API on the container's loopback
PATH = f"{BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PYTHON = "/usr/bin/python3"  # the image's, which runs the ``appveyor`` command
# the job's folder on the runner's side: what the container sees of it, by the name it has there
PROJECTS_FOLDER, BIN_FOLDER, SOCKET_SUBFOLDER = "projects", "bin", "run"
SCRATCH_FOLDER = "scratch"  # the runner's temporary files (the cache's archives): on the job's disk, not the machine's
SOCKET_NAME = "api.sock"


@dataclass(frozen=True)
class Limits:
    """The container's memory and disk limits in MB, and the file podman writes the container's id to (its memory
    cgroup is found by it)."""

    memory_mb: int
    disk_mb: int
    id_file: str


@dataclass(frozen=True)
class JobContainer:
    """The container of one job: its folder on this side, its shell's descriptors, and its limits."""

    work: Path
    commands_fd: int
    output_fd: int
    limits: Limits | None = None

    @classmethod
    def from_ticket(cls, fields: dict[str, Any] | None) -> JobContainer | None:
        if not fields:
            return None
        limits = fields.get("limits")
        return cls(
            Path(fields["work"]),
            int(fields["commandsFd"]),
            int(fields["outputFd"]),
            Limits(int(limits["memoryMb"]), int(limits["diskMb"]), str(limits["idFile"])) if limits else None,
        )

    def to_ticket(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"work": str(self.work), "commandsFd": self.commands_fd, "outputFd": self.output_fd}
        if self.limits is not None:
            fields["limits"] = {
                "memoryMb": self.limits.memory_mb,
                "diskMb": self.limits.disk_mb,
                "idFile": self.limits.id_file,
            }
        return fields

    def inside(self, path: Path) -> str:
        """Where a path below the job's projects folder is in the container."""
        return f"{PROJECTS}/{path.relative_to(self.work / PROJECTS_FOLDER).as_posix()}"
