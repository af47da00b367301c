"""A job: one cell of a build's matrix, or one delivery of a deployment, claimed by one runner at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from chalicelib.core.reprs import FieldsRepr


class Executor(StrEnum):
    """Where a build job runs (executors/images.py decides, from its image)."""

    RUNNER = "runner"  # the service's own runner: the runner function in AWS, a sandboxed process locally
    CODEBUILD = "codebuild"  # a CodeBuild build in the job's container image
    AGENT = "agent"  # one of the account's build agents


@dataclass(frozen=True)
class ReportQuota:
    """Reports counted against a job's quota: how many, and the bytes they store (JSON, as stored)."""

    count: int
    size: int


@dataclass(frozen=True, repr=False)
class JobCounts(FieldsRepr):
    """What a job reported, counted when it ends: its messages, compilation messages, tests and artifacts."""

    messages: int = 0
    compilation_messages: int = 0
    compilation_errors: int = 0
    compilation_warnings: int = 0
    tests: int = 0
    passed_tests: int = 0
    failed_tests: int = 0
    artifacts: int = 0


@dataclass(frozen=True, repr=False)
class JobArtifact(FieldsRepr):
    """A file a job pushed that storage holds: its size is storage's, not the runner's word."""

    file_name: str  # its path below the build folder, as pushed; names its object in storage
    name: str
    type: str
    size: int
    created: datetime
    etag: str | None = None  # storage's ETag at the job's finish: a changed object is not served; None: before it


@dataclass(frozen=True, repr=False)
class Job(FieldsRepr):
    """A job of a build (one cell of its matrix) or of a deployment, and where it runs."""

    job_id: str
    build_id: int
    project_id: int
    account_id: int
    number: int
    name: str
    spec: dict[str, Any]
    allow_failure: bool
    status: str
    created: datetime
    message: str | None = None
    counts: JobCounts = JobCounts()
    artifacts: list[JobArtifact] = field(default_factory=list)
    attempts: int = 0
    lease_expires: int | None = None
    deployment_id: int | None = None
    agent: str | None = None  # the deployment agent or build agent that took it
    executor: str | None = None  # where it runs (executors/images.py), decided when queued; None: jobs from before
    run_on: str | None = None  # the image as its executor names it (a CodeBuild image, an agent's image name)
    external_id: str | None = None  # its executor's id of the run (a CodeBuild build id)
    started: datetime | None = None
    finished: datetime | None = None
    updated: datetime | None = None
    reported: int = 0  # messages and tests its runner has sent this attempt (their quota's count)
    reported_outside: int = 0  # tests keys sent from outside the build this attempt (their own quota's count)
    project_slug: str | None = None  # its project's key, with account_id (jobs stored before lack it)
    token_hash: str | None = None  # the hash of its running attempt's token (the token itself is never kept)


@dataclass(frozen=True, repr=False)
class MoveFields(FieldsRepr):
    """What comes with a job's move besides its status (domain/execution/progress.py, store/job_moves.py): what a final
    status keeps (``message``, ``counts``, ``artifacts``), what a claim leases (until ``lease_expires``, to the
    runner whose token hashes to ``token_hash``), and ``holder``: the move holds only while the job's token still
    hashes to it (a runner's word moves its own attempt, never the next)."""

    message: str | None = None
    counts: JobCounts | None = None
    artifacts: list[JobArtifact] | None = None
    holder: str | None = None
    lease_expires: int | None = None
    token_hash: str | None = None


NO_FIELDS = MoveFields()  # a move that carries nothing but its new status
