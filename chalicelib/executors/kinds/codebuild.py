"""AWS CodeBuild: one build per job, in the job's container image, on the stage's project (executors/codebuild.py
starts, asks after and stops it). A run outside the service: a job whose lease ran out is asked of CodeBuild, a
cancelled one's build is stopped, and the job fetches its runner with its ticket.
"""

from __future__ import annotations

import logging

from chalicelib.config import settings
from chalicelib.core.jobs import Executor, Job
from chalicelib.executors import images
from chalicelib.executors.kind import ExecutorKind, Started
from chalicelib.protocol.ticket import Ticket

log = logging.getLogger(__name__)


class CodeBuild(ExecutorKind):
    """CodeBuild builds: pushed to the jobs queue, each started as a build the job's runner reports from."""

    name = Executor.CODEBUILD
    fetches_runner = True

    def refusal(self, image: str | None = None) -> str | None:
        """Only a stage without a CodeBuild project cannot run them."""
        if settings().codebuild_project is None:
            return "Builds in container images cannot run: no CodeBuild project is set (CONVEYOR_CODEBUILD_PROJECT)."
        return None

    def start(self, job: Job, ticket: Ticket) -> Started:
        """Start the job's build; a refusal names CodeBuild's error (botocore retried it)."""
        from chalicelib.executors import codebuild  # boto3's CodeBuild client loads only where a build is started

        project = settings().codebuild_project or ""
        try:
            build_id = codebuild.start(ticket, project, job.run_on or "", self.job_timeout(), job.attempts)
        except codebuild.StartRefused as error:
            return Started(refused=str(error))
        return Started(external_id=build_id)

    def lost_reason(self, job: Job, now: int) -> str | None:
        """What CodeBuild says of the job's build: None while it is still starting, or CodeBuild cannot be asked and
        the build could still run."""
        if job.external_id is None:  # its build id was never noted: its runner is as lost as any
            return super().lost_reason(job, now)
        from chalicelib.executors import codebuild  # boto3's CodeBuild client loads only where such a job is looked at

        build_id = job.external_id
        try:
            return codebuild.lost_reason(build_id)
        except codebuild.Unavailable as error:
            log.warning("job %s: %s", job.job_id, error)
            started = job.started.timestamp() if job.started else now
            if not codebuild.outlived(started, self.job_timeout(), now):
                return None
            return (
                f"AWS CodeBuild could not be asked about the job's build {build_id}, which cannot be running any more."
            )

    def stop(self, job: Job) -> bool:
        """Stop its build at once (a build still queued or provisioning costs until then); one whose build id is not
        noted yet stops at its runner's first heartbeat."""
        if job.external_id is None:
            return False
        from chalicelib.executors import codebuild  # boto3's CodeBuild client loads only where a build is stopped

        try:
            codebuild.stop(job.external_id)
        except codebuild.Unavailable as error:  # the cancel stands: the runner stops at its next heartbeat
            log.warning("job %s: %s", job.job_id, error)
            return False
        return True

    def outside_image(self, job: Job) -> str | None:
        """Conveyor's own image, from the stage's image repository: none; any other image: CodeBuild's."""
        if job.run_on is None:
            return super().outside_image(job)
        return None if images.is_own_image(job.run_on) else f"in the container image {job.run_on} (CodeBuild's)"

    def runner_in_users_image(self, image: str | None) -> bool:
        """Any image but the curated ones this service maps AppVeyor's names to runs the runner with its own
        python3."""
        return not images.is_curated(image)


CODEBUILD = CodeBuild()
