"""The service's own runner: a container or the sandbox on this machine (``make run``), or the runner function in
AWS (executors/__init__.py runs it, by the stage's CONVEYOR_EXECUTOR). Its jobs are the ones no image, ``Ubuntu``,
or under ``make run`` an Ubuntu version, names.
"""

from __future__ import annotations

from chalicelib import executors
from chalicelib.config import settings
from chalicelib.core.jobs import Executor, Job
from chalicelib.executors.kind import ExecutorKind, Started
from chalicelib.protocol.ticket import Ticket


class ServiceRunner(ExecutorKind):
    """The service's runner: pushed to the jobs queue, run here or on the runner function, within its limit."""

    name = Executor.RUNNER
    runs_in_service = True

    def job_timeout(self) -> int:
        """The stage's limit, and no more than the runner can run."""
        return executors.runner_job_timeout()

    def refusal(self, image: str | None = None) -> str | None:
        """Why this machine cannot run the job (no sandbox, no container, code the runner cannot read)."""
        return executors.refusal(image)

    def start(self, job: Job, ticket: Ticket) -> Started:
        """Run the job's runner: here until it ends (its exit code says whether it finished the job: 0), or on the
        runner function, asynchronously."""
        exit_code = executors.run(ticket, job.run_on)
        return Started(runner_ended=settings().executor == "local" and exit_code != 0, exit_code=exit_code)

    def outside_image(self, job: Job) -> str | None:
        """In a container of the local image: none; else the sandbox, or the runner function."""
        if settings().executor == "local":
            if executors.in_container(job.run_on):
                return None
            return "in the unshare sandbox, with this machine's own tools (no container of the image can run here)"
        return (
            "on the runner function, which has none of the image's tools (a stage with an image repository, "
            "CONVEYOR_IMAGE_REPOSITORY, runs it in AWS CodeBuild in the image)"
        )


SERVICE_RUNNER = ServiceRunner()
