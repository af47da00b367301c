"""PynamoDB models: one per DynamoDB table. Table names come from the stage's settings on each use.

The tables a request to read accounts, projects, builds and jobs uses are here; those of what surrounds builds
(reports, deployments, environments, build agents, the outbox) are store/delivery_models.py's, so that such a
request does not build their models (each costs its import: a function's cold start).
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.connection import base as connection_base
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, KeysOnlyProjection
from pynamodb.models import Model

from chalicelib import aws
from chalicelib.config import settings

# PynamoDB makes a botocore session for every table's connection; these share one loader, so one copy of the
# DynamoDB model (see aws.botocore_session).
connection_base.get_session = aws.botocore_session


class TableName:
    """A ``Meta.table_name`` read from the settings whenever PynamoDB asks for it."""

    def __init__(self, table: str) -> None:
        self.table = table

    def __get__(self, instance: Any, owner: Any) -> str:
        return settings().table_name(self.table)


class CounterModel(Model):
    """Atomic sequences: ids of users and roles, accounts, projects and builds; counts of failed sign-ins; and a
    project's job slots under max_jobs (store/job_slots.py)."""

    class Meta:
        table_name = TableName("counters")

    name = UnicodeAttribute(hash_key=True)
    value = NumberAttribute(default=0)
    expires = TTLAttribute(null=True)  # counts of a time window (failed sign-ins) go with the window
    holders = UnicodeSetAttribute(null=True)  # job slots: the jobs that hold one
    waiters = UnicodeSetAttribute(null=True)  # job slots: the queued jobs that wait for one


class UniqueModel(Model):
    """Claims on names that must be unique (account names, e-mails and role names in an account)."""

    class Meta:
        table_name = TableName("uniques")

    key = UnicodeAttribute(hash_key=True)
    expires = TTLAttribute(null=True)  # claims that only need to outlive retries (webhook deliveries) expire


class AccountModel(Model):
    """An account, found by the lower-cased name that URLs carry."""

    class Meta:
        table_name = TableName("accounts")

    name_key = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute()
    account_id = NumberAttribute()
    created = UTCDateTimeAttribute()


class MemberByEmailIndex(GlobalSecondaryIndex["MemberModel"]):
    """Every account an e-mail address belongs to."""

    class Meta:
        index_name = "by-email"
        projection = AllProjection()

    email_key = UnicodeAttribute(hash_key=True)
    account_id = NumberAttribute(range_key=True)


class MemberModel(Model):
    """A user as one account sees them: its own users and its collaborators.

    ``revision`` guards updates against lost writes (items from before it was kept have none).
    """

    class Meta:
        table_name = TableName("members")

    account_id = NumberAttribute(hash_key=True)
    user_id = NumberAttribute(range_key=True)
    account_name = UnicodeAttribute()
    email = UnicodeAttribute()
    email_key = UnicodeAttribute()
    full_name = UnicodeAttribute(default="")
    role_id = NumberAttribute()
    is_owner = BooleanAttribute(default=False)
    is_collaborator = BooleanAttribute(default=False)
    password_hash = UnicodeAttribute(null=True)
    successful_build_notification = UnicodeAttribute(default="all")
    failed_build_notification = UnicodeAttribute(default="all")
    notify_when_build_status_changed_only = BooleanAttribute(default=False)
    successful_deployment_notification = UnicodeAttribute(default="all")
    failed_deployment_notification = UnicodeAttribute(default="all")
    created = UTCDateTimeAttribute()
    updated = UTCDateTimeAttribute(null=True)
    revision = NumberAttribute(default_for_new=1, null=True)
    by_email = MemberByEmailIndex()


class RoleModel(Model):
    """A role of an account; ``member_count`` guards deletion of a role still in use, ``revision`` its updates
    against lost writes (items from before it was kept have none)."""

    class Meta:
        table_name = TableName("roles")

    account_id = NumberAttribute(hash_key=True)
    role_id = NumberAttribute(range_key=True)
    name = UnicodeAttribute()
    is_system = BooleanAttribute(default=False)
    allowed = UnicodeSetAttribute(null=True)
    member_count = NumberAttribute(default=0)
    created = UTCDateTimeAttribute()
    updated = UTCDateTimeAttribute(null=True)
    revision = NumberAttribute(default_for_new=1, null=True)


class ApiKeyModel(Model):
    """An API key, stored only as its SHA-256; ``account_id`` is absent for user-level (v2) keys."""

    class Meta:
        table_name = TableName("api-keys")

    key_hash = UnicodeAttribute(hash_key=True)
    user_id = NumberAttribute()
    account_id = NumberAttribute(null=True)
    account_name = UnicodeAttribute(null=True)
    created = UTCDateTimeAttribute()


class SessionModel(Model):
    """A dashboard sign-in, stored only as the SHA-256 of its cookie's token; DynamoDB's TTL removes it some time
    after ``expires`` (reads check ``expires`` themselves, since that removal can lag by days)."""

    class Meta:
        table_name = TableName("sessions")

    token_hash = UnicodeAttribute(hash_key=True)
    account_id = NumberAttribute()
    account_name = UnicodeAttribute()
    user_id = NumberAttribute()
    created = UTCDateTimeAttribute()
    expires = TTLAttribute()
    password_stamp = UnicodeAttribute(null=True)  # the user's password when signing in (store/members.py)


class ProjectByIdIndex(GlobalSecondaryIndex["ProjectModel"]):
    """A project by its id (ids are unique across accounts; callers still check the account)."""

    class Meta:
        index_name = "by-id"
        projection = AllProjection()

    project_id = NumberAttribute(hash_key=True)


class ProjectByBadgeIndex(GlobalSecondaryIndex["ProjectModel"]):
    """A project by its status badge id (sparse: projects from before badges get theirs on first use)."""

    class Meta:
        index_name = "by-badge"
        projection = AllProjection()

    badge_id = UnicodeAttribute(hash_key=True)


class ProjectByPublicRepositoryIndex(GlobalSecondaryIndex["ProjectModel"]):
    """Public GitHub and Bitbucket projects by their repository, ``{provider}:{owner}/{repo}`` lower-cased (sparse:
    a private project has no key, so the repository badge never finds it)."""

    class Meta:
        index_name = "by-public-repository"
        projection = AllProjection()

    public_repository = UnicodeAttribute(hash_key=True)


class ProjectByWebhookIndex(GlobalSecondaryIndex["ProjectModel"]):
    """A project by the id its repository's webhook URL carries (how an incoming webhook finds its project)."""

    class Meta:
        index_name = "by-webhook"
        projection = AllProjection()

    webhook_id = UnicodeAttribute(hash_key=True)


class ProjectByScheduleIndex(GlobalSecondaryIndex["ProjectModel"]):
    """Projects with a schedule, by when it is due next (store/schedules.py). Sparse: only they carry ``scheduled``.
    Keys only: a project's configuration is not copied into the index at every run, and the scheduler reads the
    project itself before it claims the run."""

    class Meta:
        index_name = "by-schedule"
        projection = KeysOnlyProjection()

    scheduled = UnicodeAttribute(hash_key=True)
    schedule_due = NumberAttribute(range_key=True)


class ProjectModel(Model):
    """A project, keyed by its account and its slug (so a slug is unique per account by construction).

    ``revision`` guards settings against lost updates; ``next_build_number`` is the build counter, moved on by
    the transaction that stores a build, under the condition that it is still the number that build took.
    """

    class Meta:
        table_name = TableName("projects")

    account_id = NumberAttribute(hash_key=True)
    slug = UnicodeAttribute(range_key=True)
    project_id = NumberAttribute()
    account_name = UnicodeAttribute()
    name = UnicodeAttribute()
    repository_type = UnicodeAttribute()
    repository_scm = UnicodeAttribute()
    repository_name = UnicodeAttribute()
    repository_branch = UnicodeAttribute(null=True)
    is_private = BooleanAttribute(default=False)  # no longer read; still written, so a rollback reads it right
    # True only where this version's API was told isPrivate: false. Items from before lack it: they were never
    # readable without a key, whatever is_private said, so they stay private.
    public = BooleanAttribute(null=True)
    public_repository = UnicodeAttribute(null=True)  # the by-public-repository key, on public projects only
    skip_branches_without_service_yml = BooleanAttribute(default=False)
    ignore_service_yml = BooleanAttribute(default=False)
    version_format = UnicodeAttribute()
    next_build_number = NumberAttribute(default=1)
    webhook_id = UnicodeAttribute()
    webhook_secret = UnicodeAttribute(null=True)  # a secrets token: signs (GitHub) or accompanies (GitLab) hooks
    repository_authentication = UnicodeAttribute(null=True)  # "credentials" for a private repository, else absent
    repository_username = UnicodeAttribute(null=True)
    repository_password = UnicodeAttribute(null=True)  # a secrets token
    ssh_public_key = UnicodeAttribute(null=True)  # the deploy key's public half (shown), with "ssh" authentication
    ssh_private_key = UnicodeAttribute(null=True)  # a secrets token
    ssh_host_key = UnicodeAttribute(null=True)  # the SSH server's host key as first seen ("type base64")
    rolling_builds = BooleanAttribute(default=False, null=True)  # a webhook push cancels its branch's open builds
    configuration = JSONAttribute()
    settings_yaml = UnicodeAttribute(null=True)  # the settings YAML with for: items or a list (absent: none)
    role_rights = JSONAttribute(null=True)  # {role_id: {right: allowed}}: per-project restrictions
    last_build = JSONAttribute(null=True)  # summary of the newest build, for the project list
    last_build_id = NumberAttribute(null=True)  # whose summary that is: an older build never overwrites it
    created = UTCDateTimeAttribute()
    updated = UTCDateTimeAttribute(null=True)
    revision = NumberAttribute(default=1)
    badge_id = UnicodeAttribute(null=True)  # the unguessable id of the project's status badge URL
    schedule_expression = UnicodeAttribute(null=True)  # scheduleCrontabExpression; absent: no scheduled builds
    scheduled = UnicodeAttribute(null=True)  # with a schedule only: the one partition of the by-schedule index
    schedule_due = NumberAttribute(null=True)  # when the schedule is due next (epoch seconds), moved by each claim
    schedule_error = UnicodeAttribute(null=True)  # why the last scheduled build did not start
    # the run (its due time, epoch seconds) whose build start was last taken: a redelivered message starts nothing
    schedule_started = NumberAttribute(null=True)
    by_id = ProjectByIdIndex()
    by_webhook = ProjectByWebhookIndex()
    by_badge = ProjectByBadgeIndex()
    by_public_repository = ProjectByPublicRepositoryIndex()
    by_schedule = ProjectByScheduleIndex()


class BuildByIdIndex(GlobalSecondaryIndex["BuildModel"]):
    """A build by its id alone (re-run and delete name only the id)."""

    class Meta:
        index_name = "by-id"
        projection = AllProjection()

    build_id = NumberAttribute(hash_key=True)


class BuildByVersionIndex(GlobalSecondaryIndex["BuildModel"]):
    """A project's build by version (unique per project: the version claim sees to it)."""

    class Meta:
        index_name = "by-version"
        projection = AllProjection()

    project_id = NumberAttribute(hash_key=True)
    version = UnicodeAttribute(range_key=True)


class BuildByBranchIndex(GlobalSecondaryIndex["BuildModel"]):
    """A project's builds of one branch, newest first: ``branch_key`` is ``{project_id}#{branch}``."""

    class Meta:
        index_name = "by-branch"
        projection = AllProjection()

    branch_key = UnicodeAttribute(hash_key=True)
    build_id = NumberAttribute(range_key=True)


class BuildModel(Model):
    """A build: a commit of a project, its configuration fixed when it started, and its jobs' summary.

    Keyed by project and id so that a project's history is one Query, newest first. ``revision``
    guards the status a build derives from its jobs against two jobs finishing at once.
    """

    class Meta:
        table_name = TableName("builds")

    project_id = NumberAttribute(hash_key=True)
    build_id = NumberAttribute(range_key=True)
    account_id = NumberAttribute()
    build_number = NumberAttribute()
    version = UnicodeAttribute()
    branch = UnicodeAttribute()
    branch_key = UnicodeAttribute()
    ref = UnicodeAttribute()
    commit = JSONAttribute()  # commitId, message, messageExtended, author/committer names and e-mails, committed
    pull_request = JSONAttribute(null=True)  # pullRequestId, pullRequestName
    configuration = JSONAttribute()  # as merged at start: secrets still encrypted
    request_variables = JSONAttribute(null=True)  # the start request's environmentVariables
    flags = JSONAttribute(null=True)  # forced, scheduled, reBuild, reRunIncomplete, postsStatuses
    job_ids = JSONAttribute()
    messages = JSONAttribute(null=True)
    status = UnicodeAttribute()
    created = UTCDateTimeAttribute()
    started = UTCDateTimeAttribute(null=True)
    finished = UTCDateTimeAttribute(null=True)
    updated = UTCDateTimeAttribute(null=True)
    revision = NumberAttribute(default=1)
    notified_revision = NumberAttribute(null=True)  # the finished revision its notifications went out for
    project_slug = UnicodeAttribute(null=True)  # the project's range key: its summary is written without a lookup
    by_id = BuildByIdIndex()
    by_version = BuildByVersionIndex()
    by_branch = BuildByBranchIndex()


class JobByBuildIndex(GlobalSecondaryIndex["JobModel"]):
    """A build's jobs, in matrix order."""

    class Meta:
        index_name = "by-build"
        projection = AllProjection()

    build_id = NumberAttribute(hash_key=True)
    number = NumberAttribute(range_key=True)


class JobByLeaseIndex(GlobalSecondaryIndex["JobModel"]):
    """Running jobs by the time their lease runs out. Sparse: only running jobs carry ``leased``."""

    class Meta:
        index_name = "by-lease"
        projection = AllProjection()

    leased = UnicodeAttribute(hash_key=True)
    lease_expires = NumberAttribute(range_key=True)


class JobByWaitIndex(GlobalSecondaryIndex["JobModel"]):
    """Queued jobs by when their message was last sent (or is due), one partition per queue (store/jobs.py).
    Sparse: only queued jobs carry ``waiting``."""

    class Meta:
        index_name = "by-wait"
        projection = AllProjection()

    waiting = UnicodeAttribute(hash_key=True)
    sent_at = NumberAttribute(range_key=True)


class JobModel(Model):
    """A build job: one cell of the matrix, claimed by one runner at a time."""

    class Meta:
        table_name = TableName("jobs")

    job_id = UnicodeAttribute(hash_key=True)
    build_id = NumberAttribute()
    project_id = NumberAttribute()
    account_id = NumberAttribute()
    number = NumberAttribute()
    name = UnicodeAttribute()
    spec = JSONAttribute()  # image, configuration, platform, variables of its matrix cell
    allow_failure = BooleanAttribute(default=False)
    status = UnicodeAttribute()
    message = UnicodeAttribute(null=True)  # why it failed or was cancelled, when the service knows
    deployment_id = NumberAttribute(null=True)  # set on the jobs of a deployment (build_id: the build it deploys)
    agent = UnicodeAttribute(null=True)  # the deployment agent or build agent that took the job
    executor = UnicodeAttribute(null=True)  # where a build job runs (executors/images.py); absent on older jobs
    run_on = UnicodeAttribute(null=True)  # the image as its executor names it
    external_id = UnicodeAttribute(null=True)  # the executor's id of the run (a CodeBuild build id)
    log_chunks = NumberAttribute(null=True)  # log chunks an agent has sent
    counts = JSONAttribute(null=True)  # JobCounts' fields, once it ended (store/job_forms.py: and the form before)
    artifacts = JSONAttribute(null=True)  # JobArtifact's fields, ISO 8601 times
    attempts = NumberAttribute(default=0)
    leased = UnicodeAttribute(null=True)
    lease_expires = NumberAttribute(null=True)
    token_hash = UnicodeAttribute(null=True)  # SHA-256 of the job token its runner holds, while it holds one
    reports = NumberAttribute(null=True)  # messages and tests its runner has sent (a quota)
    outside_reports = NumberAttribute(null=True)  # tests keys sent from outside the build (a quota of their own)
    report_bytes = NumberAttribute(null=True)  # the bytes of what its runner's reports stored (a quota; 0 if absent)
    outside_report_bytes = NumberAttribute(null=True)  # the bytes of what keys sent from outside stored (a quota)
    cache_bytes = NumberAttribute(null=True)  # the bytes of cache entries its runner was handed uploads for (a quota)
    project_slug = UnicodeAttribute(null=True)  # the project's range key: a runner's call reads it with the build
    credentials_taken = BooleanAttribute(null=True)  # its runner took the clone credentials (once per claim)
    waiting = UnicodeAttribute(null=True)  # while queued, the wait partition of its message (by_wait index)
    sent_at = NumberAttribute(null=True)  # when its message was last sent, or is due (epoch seconds)
    created = UTCDateTimeAttribute()
    started = UTCDateTimeAttribute(null=True)
    finished = UTCDateTimeAttribute(null=True)
    updated = UTCDateTimeAttribute(null=True)
    by_build = JobByBuildIndex()
    by_lease = JobByLeaseIndex()
    by_wait = JobByWaitIndex()


class TestHistoryModel(Model):
    """A project's tests (issue 38), in the shapes its reads need (store/tests_history.py): under ``p#{projectId}``,
    one small summary item per test (``s#{testId}``: what the tests list reads, one Query), one working item per
    test (``w#{testId}``: its last 100 runs and recent commits, from which the summary is derived) and the
    quarantine (``q``); under ``t#{projectId}#{testId}``, one item per run (``{finished}#{jobId}#{attempt}``)."""

    __test__ = False  # not a pytest class, whatever its name

    class Meta:
        table_name = TableName("test-history")

    key = UnicodeAttribute(hash_key=True)
    item = UnicodeAttribute(range_key=True)
    body = JSONAttribute()
    version = NumberAttribute(default=0)  # a working item's and the quarantine's: written only at the one read
    expires = TTLAttribute(null=True)  # runs go after RUN_DAYS
