"""An executor kind: where a build job runs, and what the domain asks of it (docs/executors.md). The one interface
every kind implements, one module each in executors/kinds/ (the service's runner, CodeBuild, build agents), listed
in executors/kinds/__init__.py; images.py decides, from a job's image, which kind a job is placed on.

What a kind says: who moves its jobs (the service pushes them to the jobs queue and starts each, or an agent pulls
them), how a job is started and what came of it, its time limit, why it cannot run jobs here now, what a job whose
lease ran out or that was cancelled becomes, what its runner is warned and may be handed, and whether its machine
provides what appveyor.yml's refused settings ask. The defaults are what the service's own runner does; a kind
overrides what it does otherwise. The domain keeps the writes: a kind answers, and reads no store.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from chalicelib.config import settings
from chalicelib.core.jobs import Job
from chalicelib.protocol.ticket import Ticket

LEASE_EXPIRED = "The job's runner stopped responding (its lease expired); the job failed."


@dataclass(frozen=True)
class Started:
    """What came of starting a claimed job: its executor's id of the run, or why it did not start; and for a
    runner that ran the job to its end here, whether it ended without finishing it, and its exit code."""

    external_id: str | None = None  # a CodeBuild build id: noted on the job
    refused: str | None = None  # the executor did not start it: the job fails with this message
    runner_ended: bool = False  # the runner exited, and may have left the job unfinished
    exit_code: int | None = None  # the runner's (negative: a signal)


class ExecutorKind(ABC):
    """One kind of executor, by the name jobs store (core/jobs.py's Executor), and what Conveyor does with it."""

    name: str  # the value a job's ``executor`` holds (core/jobs.py's Executor names the service's first three)
    # an agent takes its jobs itself (from its image's partition, where a job waiting for a max_jobs slot is held
    # back); False: the service sends each to the jobs queue (again, when a slot frees) and starts it
    pulled: bool = False
    runs_in_service: bool = False  # its runners are the service's own processes, which end with the service
    fetches_runner: bool = False  # its jobs fetch the runner as a zip with their ticket (an image of the user's)
    provides_setup: bool = False  # its machine provides what appveyor.yml's refused settings ask: warned, not refused

    def job_timeout(self) -> int:
        """A job's limit in seconds: the stage's (AppVeyor's 60 minutes by default)."""
        return settings().job_timeout_seconds

    @abstractmethod
    def refusal(self, image: str | None = None) -> str | None:
        """Why its jobs (of ``image``, as routed) cannot run here now; None when they can."""

    @abstractmethod
    def start(self, job: Job, ticket: Ticket) -> Started:
        """Start the claimed ``job``'s runner with ``ticket``."""

    def lost_reason(self, job: Job, now: int) -> str | None:
        """Why a job whose lease ran out before ``now`` is lost; None while its run goes on elsewhere (its lease is
        then renewed)."""
        return LEASE_EXPIRED

    def stop(self, job: Job) -> bool:
        """Stop a cancelled job's run at once; True when it stopped (the job ends with it), False when its runner
        stops it at its next heartbeat."""
        return False

    def outside_image(self, job: Job) -> str | None:
        """Where a placed job runs when that is not Conveyor's Ubuntu image, which alone applies stack: and
        services: (images/ubuntu/); None when it is."""
        return "elsewhere"

    def runner_warnings(self, job: Job) -> list[str]:
        """What the job's log says first (after "Build started") of where it runs."""
        return []

    def runner_in_users_image(self, image: str | None) -> bool:
        """Whether a job of ``image`` (as routed) has its runner run by the image's own code, which the build's
        author may have chosen: a pull request's then gets no clone credentials."""
        return False
