"""Settings read from the environment when asked for, never at import time.

Chalice applies the stage's ``environment_variables`` from ``.chalice/config.json`` before the app is
imported (in Lambda, under ``chalice local`` and in the test client), so every deployed stage and the
local stack read the same names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """What the service needs to know about where it runs."""

    stage: str
    table_prefix: str
    bucket: str
    kms_key: str
    base_url: str | None
    allow_local_repositories: bool
    jobs_queue: str
    deployments_queue: str
    notifications_queue: str
    notification_sender: str  # the From of notification e-mails (an SES identity)
    job_timeout_seconds: int  # a job's own limit; the function's remaining time caps it further
    lease_seconds: int  # a running job not heard from for this long is presumed dead
    heartbeat_seconds: float  # how often a runner renews its lease and looks for a cancel
    executor: str  # where build jobs run: "local" (a sandboxed process here) or "lambda" (the runner function)
    runner_api_url: str | None  # the API's URL as runners reach it (the job protocol)
    runner_function: str  # the runner Lambda function's name, for the "lambda" executor
    unsafe_no_sandbox: bool  # run local jobs without a sandbox when none can be made (a warning in every log)
    codebuild_project: str | None  # the CodeBuild project container-image jobs run on; None: no CodeBuild here
    # where Conveyor's own images are pushed (an ECR repository's URI, infra/template.py): CodeBuild runs AppVeyor's
    # Ubuntu names in them; None: in CodeBuild's curated images where one matches (docs/executors.md)
    image_repository: str | None
    runner_timeout_seconds: int  # the longest job the runner (executor "lambda" or "local") takes
    oidc_signing_key: str  # the asymmetric KMS key (an alias) that signs jobs' ID tokens (docs/oidc.md)
    oidc_published_keys: tuple[str, ...]  # further keys the issuers' JWKS lists: the next one, or the one before
    # the local executor's containers (executors/containers.py): "auto" (where podman and the local image are
    # here), "off" (every job in the unshare sandbox; versioned Ubuntu images are then refused)
    containers: str
    # each local container job's limits (executors/containers.py, docs/executors.md): memory (swap included) and
    # disk in MB, CPUs (a share of the machine's cores, at most all of them)
    job_memory_mb: int
    job_cpus: float
    job_disk_mb: int

    def table_name(self, table: str) -> str:
        """The DynamoDB table name for one of the service's tables in this stage."""
        return f"{self.table_prefix}{table}"


def settings() -> Settings:
    """The settings in force now (cheap: it only reads the environment)."""
    stage = os.environ.get("CONVEYOR_STAGE", "local")
    return Settings(
        stage=stage,
        table_prefix=os.environ.get("CONVEYOR_TABLE_PREFIX", f"conveyor-{stage}-"),
        bucket=os.environ.get("CONVEYOR_BUCKET", f"conveyor-{stage}-data"),
        kms_key=os.environ.get("CONVEYOR_KMS_KEY", f"alias/conveyor-{stage}"),
        base_url=os.environ.get("CONVEYOR_BASE_URL") or None,
        allow_local_repositories=os.environ.get("CONVEYOR_ALLOW_LOCAL_REPOSITORIES", "").lower() == "true",
        jobs_queue=os.environ.get("CONVEYOR_JOBS_QUEUE", f"conveyor-{stage}-jobs"),
        deployments_queue=os.environ.get("CONVEYOR_DEPLOYMENTS_QUEUE", f"conveyor-{stage}-deployments"),
        notifications_queue=os.environ.get("CONVEYOR_NOTIFICATIONS_QUEUE", f"conveyor-{stage}-notifications"),
        notification_sender=os.environ.get("CONVEYOR_NOTIFICATION_SENDER") or f"conveyor@{stage}.local",
        job_timeout_seconds=int(os.environ.get("CONVEYOR_JOB_TIMEOUT_SECONDS", "3600")),
        lease_seconds=int(os.environ.get("CONVEYOR_JOB_LEASE_SECONDS", "120")),
        heartbeat_seconds=float(os.environ.get("CONVEYOR_HEARTBEAT_SECONDS", "5")),
        executor=os.environ.get("CONVEYOR_EXECUTOR") or ("local" if stage == "local" else "lambda"),
        runner_api_url=os.environ.get("CONVEYOR_RUNNER_API_URL") or os.environ.get("CONVEYOR_BASE_URL") or None,
        runner_function=os.environ.get("CONVEYOR_RUNNER_FUNCTION", f"conveyor-{stage}-runner"),
        unsafe_no_sandbox=os.environ.get("CONVEYOR_UNSAFE_NO_SANDBOX", "").lower() == "true",
        codebuild_project=os.environ.get("CONVEYOR_CODEBUILD_PROJECT") or None,
        image_repository=os.environ.get("CONVEYOR_IMAGE_REPOSITORY") or None,
        runner_timeout_seconds=int(os.environ.get("CONVEYOR_RUNNER_TIMEOUT_SECONDS", "0") or 0),
        oidc_signing_key=os.environ.get("CONVEYOR_OIDC_SIGNING_KEY") or f"alias/conveyor-{stage}-oidc",
        oidc_published_keys=tuple(
            key.strip() for key in os.environ.get("CONVEYOR_OIDC_PUBLISHED_KEYS", "").split(",") if key.strip()
        ),
        containers="off" if os.environ.get("CONVEYOR_CONTAINERS", "auto").lower() == "off" else "auto",
        job_memory_mb=_positive_int("CONVEYOR_JOB_MEMORY_MB", DEFAULT_JOB_MEMORY_MB),
        job_cpus=_job_cpus(),
        job_disk_mb=_positive_int("CONVEYOR_JOB_DISK_MB", DEFAULT_JOB_DISK_MB),
    )


# A laptop's share for one job, as CodeBuild's smallest Linux compute (BUILD_GENERAL1_SMALL: 4 GiB, 2 vCPU) gives a
# job in AWS: a build that fits here fits there. The disk is a sparse file: only what the job writes takes space.
DEFAULT_JOB_MEMORY_MB = 4096
DEFAULT_JOB_CPUS = 2.0
DEFAULT_JOB_DISK_MB = 10240


def _positive_int(name: str, default: int) -> int:
    """A whole number setting of at least 1; a value that is not one is refused at once (never silently ignored)."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name} is a whole number of MB, 1 or more (it is {value!r}).")
    return int(value)


def _job_cpus() -> float:
    """CONVEYOR_JOB_CPUS (default 2), at most this machine's cores: a share more than all of them is all of them."""
    value = os.environ.get("CONVEYOR_JOB_CPUS", "").strip()
    try:
        cpus = float(value) if value else DEFAULT_JOB_CPUS
    except ValueError:
        cpus = 0
    if not cpus > 0:
        raise ValueError(f"CONVEYOR_JOB_CPUS is a number of CPUs above 0, such as 1.5 (it is {value!r}).")
    return min(cpus, float(os.cpu_count() or 1))


def repository_base_url(provider: str, default: str) -> str:
    """Where a hosted provider's repositories are cloned from: CONVEYOR_<PROVIDER>_URL, else its public host."""
    return os.environ.get(f"CONVEYOR_{provider.upper()}_URL", default).rstrip("/")


def forge_api_url(provider: str) -> str | None:
    """Where a hosted provider's REST API is, when the operator set it: CONVEYOR_<PROVIDER>_API_URL."""
    value = os.environ.get(f"CONVEYOR_{provider.upper()}_API_URL", "").rstrip("/")
    return value or None
