"""The local container executor: each build job's scripts in a fresh container of its image, on podman with runc.

Under ``make run`` (and the tests that ask for it) jobs of no image, ``Ubuntu`` and ``Ubuntu1604`` ... ``Ubuntu2204``
run here, in the local image (images/ubuntu/, built by ``make image`` into .images/ubuntu). Per job:

- a container of the image's root filesystem with a writable overlay thrown away with it; its users are mapped
  to unprivileged ids of this machine (root inside is 100000 outside), and the build's user ``appveyor`` has
  passwordless sudo, as on AppVeyor's Linux images;
- its own network namespace from slirp4netns: its own loopback, the outbound network, and no way to this
  machine's loopback (the AWS emulator, the API's internals) nor to another job;
- the job's folder, bound in at /home/appveyor/projects (the build folder is ``<slug>`` in it), with the runner's
  ``appveyor`` command and the Build Worker API's unix socket, which the container's first process
  (images/ubuntu/init.py) serves on the container's own loopback;
- limits: its memory (swap included) and CPU share (podman's ``--memory``, ``--memory-swap``, ``--cpus``, in the
  container's cgroup), and a disk of its own holding the job's folder and the overlay's writable layer
  (executors/job_disk.py); the operator sets them (CONVEYOR_JOB_MEMORY_MB, CONVEYOR_JOB_CPUS, CONVEYOR_JOB_DISK_MB).

The runner stays outside, in the unshare sandbox (runner/sandbox.py) as the uid the container's ``appveyor`` has
on this machine: it fetches the source with the repository's credentials, which never enter the container, talks
to the service with the job's token, and drives the container's Bash through two pipes (runner/container.py). A
job whose container cannot start fails, saying why on its log's first line and in its message.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import resource
import secrets
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from chalicelib.config import settings
from chalicelib.executors import job_disk, job_tools, tool_cache
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner import container as job_container
from chalicelib.runner import sandbox
from chalicelib.runner.protocol import JobClient, ProtocolError

log = logging.getLogger(__name__)
PROJECT_DIR = Path(__file__).resolve().parents[2]
IMAGE_ROOT = PROJECT_DIR / ".images" / "ubuntu"  # make image builds it (images/ubuntu/build.sh); CONVEYOR_LOCAL_IMAGE
IMAGE_STAMP = "etc/conveyor-image"  # written last by the image's setup: a tree without it is not finished
INIT = PROJECT_DIR / "images" / "ubuntu" / "init.py"
ID_SHIFT = 100000  # the container's uid 0 is this machine's 100000 (images/ubuntu/shift_ids.py owns the tree so)
BUILD_UID = ID_SHIFT + 1000  # appveyor's, outside: the runner runs as it, so both write the job's folder
JOBS_ROOT = job_disk.JOBS_ROOT
PIDS_LIMIT = 2048  # a job's processes at most (its cgroup's): a fork bomb stops there, and other jobs run on


def limits() -> tuple[str, ...]:
    """The container's resource limits: this machine's own hard limits, never more. Its root may not be allowed to
    raise one (no CAP_SYS_RESOURCE on some hosts), as podman's defaults (a million open files) would. The process
    count limit is per user of this machine, shared by every job's ``appveyor``: the pids cgroup bounds each job."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    nofile = 1048576 if nofile == resource.RLIM_INFINITY else nofile
    # 32768: Linux's default pid_max, so no real bound; more is refused here (runc's own limit, it seems)
    nproc = 32768 if nproc == resource.RLIM_INFINITY else min(nproc, 32768)
    soft = min(1024, nofile)
    return (
        "--ulimit",
        f"nofile={soft}:{nofile}",
        "--ulimit",
        f"nproc={nproc}:{nproc}",
        "--pids-limit",
        str(PIDS_LIMIT),
    )


MAPPING = ("--uidmap", f"0:{ID_SHIFT}:65536", "--gidmap", f"0:{ID_SHIFT}:65536")  # the image's tree is owned so
_READY = b"conveyor-container-ready\n"
_START_SECONDS = 60.0
_TOOL_CACHE_SECONDS = 900.0  # at most, for all of a job's stack: installs together (docs/executors.md)
_FIRST_FD = 20  # the shell's descriptors, above those the sandbox's mount script uses
_CID_FILE = "container-id"  # podman writes the container's id there: the runner finds its memory cgroup


@dataclass(frozen=True)
class Runtime:
    podman: str
    image: Path


def runtime() -> Runtime | str:
    """podman with runc and the local image, or why jobs cannot run in containers here (tried once per process)."""
    return _runtime(Path(os.environ.get("CONVEYOR_LOCAL_IMAGE") or IMAGE_ROOT))


@functools.cache
def _runtime(image: Path) -> Runtime | str:
    podman = shutil.which("podman")
    missing = [tool for tool in ("podman", "runc", "slirp4netns") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install podman runc slirp4netns uidmap iptables)"
    if os.geteuid() != 0:
        return "the container executor runs podman as root, and this service does not run as root"
    if not (image / IMAGE_STAMP).is_file():
        return f"the local image is not built (make image builds it into {image})"
    assert podman is not None
    try:
        probe = subprocess.run(
            [podman, "--runtime", "runc", "run", "--rm", *limits(), *MAPPING, "--network", "none", "--rootfs",
             f"{image}:O", "/bin/true"],
            capture_output=True, timeout=120, check=False, env=_environment(),
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"podman could not start a container: {error}"
    if probe.returncode != 0:
        return f"podman could not start a container: {_podman_error(probe.stderr)}"
    probe_disk = JOBS_ROOT / f"{os.getpid()}-probe"  # a job's disk: without loop devices none could be limited
    try:
        JOBS_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
        job_disk.make(probe_disk, 16)  # (named as a job's folder: a service killed meanwhile leaves it for the next)
    except (OSError, job_disk.DiskRefused) as error:
        return f"a job's disk (a loop-mounted file system, docs/executors.md) cannot be made here: {error}"
    job_disk.remove(probe_disk)
    return Runtime(podman, image)


def refusal() -> str | None:
    """Why this machine runs no container now, or None."""
    made = runtime()
    return None if isinstance(made, Runtime) else made


def run(ticket: Ticket, timeout: float) -> int:
    """Run the ticket's job in a new container, its runner beside it in the sandbox; the runner's exit code (0 when
    the job could not start and was failed here)."""
    made = runtime()
    if not isinstance(made, Runtime):
        _fail(ticket, f"This job's image cannot run here: {made}.")
        return 0
    filling = time.monotonic()
    try:
        tools = job_tools.fill(ticket, filling + min(timeout, _TOOL_CACHE_SECONDS))
    except job_tools.Ended as ended:
        if ended.cancel is not None:
            _end(ticket, "cancelled", ended.cancel)
        return 0
    ticket = replace(ticket, warnings=(*ticket.warnings, *tools.notes))  # the log's first lines, before any script
    timeout = max(timeout - (time.monotonic() - filling), 1.0)  # the installs for the job count against its timeout
    try:
        return _run_on_disk(made, ticket, timeout, tools.folders)
    finally:
        tools.release()  # its container is gone: a full cache may remove its releases now


def _run_on_disk(made: Runtime, ticket: Ticket, timeout: float, tools: dict[str, Path]) -> int:
    """Run the job in a container on a disk of its own, removed after."""
    started = time.monotonic()
    config = settings()
    try:
        work = job_disk.job_folder(ticket.job_id, config.job_disk_mb, BUILD_UID)
    except job_disk.DiskRefused as error:
        _fail(ticket, f"This job's container could not start: {error}.")
        return 0
    try:
        return _run_in(made, ticket, work, timeout, started, tools)
    finally:
        job_disk.remove(work)


def _run_in(made: Runtime, ticket: Ticket, work: Path, timeout: float, started: float, tools: dict[str, Path]) -> int:
    """Run the job in a container whose writable layer and folder are on the job's disk (``work``), with the
    releases of the machine's tool cache its stack: asks for (``tools``)."""
    config = settings()
    name = f"conveyor-job-{ticket.job_id}-{secrets.token_hex(4)}"
    limits_given = job_container.Limits(config.job_memory_mb, config.job_disk_mb, str(work / _CID_FILE))
    with tempfile.TemporaryFile() as errors:
        try:
            root = job_disk.root_file_system(work, made.image)
        except job_disk.DiskRefused as error:
            _fail(ticket, f"This job's container could not start: {error}.")
            return 0
        container = subprocess.Popen(
            [made.podman, *_run_options(work, name, tools), *resource_limits(config.job_memory_mb, config.job_cpus),
             "--cidfile", str(work / _CID_FILE), "--rootfs", str(root), job_container.PYTHON, "-I",
             "/opt/conveyor/init.py"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=_environment(), start_new_session=True,
            cwd=root.parent,  # conmon leaves a file "oom" where it runs after an OOM kill: on the job's disk
        )  # fmt: skip
        assert container.stdin is not None and container.stdout is not None
        # the runner holds the only copies: when it closes the commands, the container ends
        commands = fcntl.fcntl(container.stdin.fileno(), fcntl.F_DUPFD_CLOEXEC, _FIRST_FD)
        output = fcntl.fcntl(container.stdout.fileno(), fcntl.F_DUPFD_CLOEXEC, _FIRST_FD)
        container.stdin.close()
        container.stdout.close()
        copies = [commands, output]

        def close_copies() -> None:
            while copies:
                os.close(copies.pop())

        def ready() -> bool:  # the runner has started, and loads while the container starts
            try:
                if _ready(output):
                    log.info("job %s: its container started in %.2f s", ticket.job_id, time.monotonic() - started)
                    return True
                container.kill()
                container.wait()
                errors.seek(0)
                _fail(ticket, f"This job's container could not start: {_podman_error(errors.read())}.")
                return False
            finally:
                close_copies()

        shell = job_container.JobContainer(work, commands, output, limits_given)
        try:
            return sandbox.run(
                replace(ticket, container=shell.to_ticket()),
                unsafe=False,
                timeout=timeout,
                made_for_job=sandbox.as_user(BUILD_UID, (str(work),)),
                pass_fds=(commands, output),
                started=ready,
            )
        finally:
            close_copies()
            _remove(made.podman, name, container)


def _run_options(work: Path, name: str, tools: dict[str, Path]) -> list[str]:
    socket_folder = work / job_container.SOCKET_SUBFOLDER
    releases = [f"--volume={folder}:{tool_cache.INSIDE}/{named}:ro,nosuid,nodev" for named, folder in tools.items()]
    return [
        "--runtime", "runc", "run", "--rm", "-i", "--name", name, "--log-driver", "none", *limits(), *MAPPING,
        "--user", "appveyor", "--network", "slirp4netns", "--hostname", "appveyor-vm", "--pull", "never",
        "--env", f"CONVEYOR_API_PORT={job_container.API_PORT}",
        "--env", f"CONVEYOR_API_SOCKET={job_container.SOCKET_FOLDER}/{job_container.SOCKET_NAME}",
        "--volume", f"{work / job_container.PROJECTS_FOLDER}:{job_container.PROJECTS}:nosuid,nodev",
        "--volume", f"{work / job_container.BIN_FOLDER}:{job_container.BIN}:ro,nosuid,nodev",
        "--volume", f"{socket_folder}:{job_container.SOCKET_FOLDER}:ro,nosuid,nodev",
        "--volume", f"{INIT}:/opt/conveyor/init.py:ro",
        *releases,
        "--workdir", job_container.PROJECTS,
    ]  # fmt: skip


def resource_limits(memory_mb: int, cpus: float) -> tuple[str, ...]:
    """podman's options for a job's memory (swap included: the same limit for both) and CPU share."""
    return ("--memory", f"{memory_mb}m", "--memory-swap", f"{memory_mb}m", "--cpus", f"{cpus:g}")


def _ready(fd: int) -> bool:
    """Whether the container's first process said it is ready (byte by byte: nothing after it is consumed)."""
    deadline = time.monotonic() + _START_SECONDS
    seen = b""
    while not seen.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        byte = os.read(fd, 1)
        if not byte:
            return False
        seen += byte
    return seen == _READY


def _remove(podman: str, name: str, container: subprocess.Popen[bytes]) -> None:
    """The container ends with its job, and everything in it: whatever the build did to keep it alive."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            [podman, "rm", "--force", "--time", "0", name],
            capture_output=True, timeout=60, check=False, env=_environment(),
        )  # fmt: skip
    with contextlib.suppress(subprocess.TimeoutExpired):
        container.wait(timeout=30)
        return
    container.kill()
    container.wait()


def _fail(ticket: Ticket, reason: str) -> None:
    """The job ends failed, its reason on its log's first line and as its message, with the job's own token."""
    _end(ticket, "failed", reason)


def _end(ticket: Ticket, result: str, reason: str) -> None:
    """The job ends with ``result``, its reason on its log's first line and as its message, with its own token."""
    client = JobClient(ticket)
    try:
        client.put_log_chunk(0, (reason + "\n").encode())
        client.finish(result, reason, 1, [])
    except ProtocolError:
        log.warning("job %s: could not say why it ended: %s", ticket.job_id, reason, exc_info=True)


def _podman_error(stderr: bytes) -> str:
    """podman's own words, without the warnings it prints about unrelated network configuration."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line and "level=warning" not in line]
    return " ".join(lines)[-500:] or "podman exited without saying why"


def _environment() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "HOME": "/root"}
