"""Where build jobs run. Each executor is handed a job's ticket (the API's URL, the job id, its job token) and
nothing else of the service, and runs the one runner program with it (``python -m chalicelib.runner``).

- ``runner``, the service's own, is one of:
  - ``local``: on this machine, for ``make run`` and the tests: the job's scripts in a container of its image
    (executors/containers.py) where podman and the local image are here, else a sandboxed process
    (runner/sandbox.py), which serves jobs of no image or ``Ubuntu`` only;
  - ``lambda``: the runner function of the packaged template, invoked asynchronously (executors/aws_lambda.py);
    its role grants nothing but its own logs.
- ``codebuild``: a CodeBuild build per job, in the job's container image (executors/codebuild.py).
- ``agent``: the account's build agents take their jobs themselves (domain/execution/build_agents.py); nothing is
started.

executors/images.py decides which, from the job's image, when the build is queued; each is an ExecutorKind
(executors/kind.py), one module each in executors/kinds/, which the domain asks. This module is the service's runner's
own: where and how it runs a job, and why it cannot.
"""

from __future__ import annotations

from chalicelib.config import settings
from chalicelib.protocol.ticket import Ticket

_GRACE_SECONDS = 120  # beyond the job's own limit, before the local executor kills a runner that did not stop


def run(ticket: Ticket, image: str | None = None) -> int | None:
    """Hand the ticket to the stage's runner: the local one returns the runner's exit code when it has ended (0:
    it finished the job, or found it ended), the function's None at once. ``image``: the job's, as routed (None:
    no image, or ``Ubuntu``)."""
    config = settings()
    if config.executor == "lambda":
        from chalicelib.executors import aws_lambda

        aws_lambda.start(ticket, config.runner_function)
        return None
    from chalicelib.runner import sandbox as local

    timeout = runner_job_timeout() + _GRACE_SECONDS
    if in_container(image):
        from chalicelib.executors import containers

        return containers.run(ticket, timeout)
    return local.run(ticket, config.unsafe_no_sandbox, timeout)


def in_container(image: str | None) -> bool:
    """Whether the local executor runs a job of ``image`` in a container: a versioned Ubuntu image always (where
    none can run, the job fails saying why), no image or ``Ubuntu`` where containers can run here."""
    config = settings()
    if config.executor != "local" or config.containers == "off":
        return False
    if image is not None:
        return True
    from chalicelib.executors import containers

    return containers.refusal() is None


def runner_job_timeout() -> int:
    """A job's limit in seconds on the service's runner: the stage's (AppVeyor's 60 minutes by default), and no
    more than the runner can run (the runner function's 15 minutes, less the time to report)."""
    config = settings()
    if config.runner_timeout_seconds > 0:
        return min(config.job_timeout_seconds, config.runner_timeout_seconds)
    return config.job_timeout_seconds


def local_notice() -> str | None:
    """What the local stack says once at its start about where its jobs run; None for another executor."""
    config = settings()
    if config.executor != "local":
        return None
    if config.containers == "off":
        return "Jobs run in the unshare sandbox (CONVEYOR_CONTAINERS=off): jobs of Ubuntu1604 ... Ubuntu2404 fail."
    from chalicelib.executors import containers

    why = containers.refusal()
    if why is None:
        return (
            "Jobs run in containers of Conveyor's local image (podman with runc; docs/executors.md), each within "
            f"{config.job_memory_mb} MB of memory, {config.job_cpus:g} CPUs and {config.job_disk_mb} MB of disk "
            "(CONVEYOR_JOB_MEMORY_MB, CONVEYOR_JOB_CPUS, CONVEYOR_JOB_DISK_MB)."
        )
    return (
        f"Jobs run in the unshare sandbox, not in containers: {why}. Jobs of no image or Ubuntu run there; jobs of "
        "Ubuntu1604 ... Ubuntu2404 fail, saying so."
    )


def refusal(image: str | None = None) -> str | None:
    """Why the service's runner cannot run jobs (of ``image``, as routed) here now; None when it can."""
    config = settings()
    if config.executor != "local":
        return None
    from chalicelib.runner import sandbox as local
    from chalicelib.runner import sandbox_probes

    unreadable = sandbox_probes.unreadable_code()  # the runner runs as nobody in the sandbox, a container's runner too
    if unreadable is not None and isinstance(local.sandbox(), local.Sandbox):
        return unreadable
    if image is not None and in_container(image):
        from chalicelib.executors import containers

        why = containers.refusal()
        if why is not None:
            return f"The image '{image}' runs in a container of Conveyor's local image, and none can run here: {why}."
        return None
    try:
        local.check(config.unsafe_no_sandbox)
    except local.SandboxUnavailable as error:
        return str(error)
    return None


def local_repository_refusal(path: str) -> str | None:
    """Why the builds of this stage cannot read the local repository at ``path``; None when they can, or when its
    jobs do not run on this machine."""
    if settings().executor != "local":
        return None
    from chalicelib.runner import sandbox_probes

    return sandbox_probes.unreadable_repository(path)
