"""The job protocol: what a runner holding a job token may read and report, for its one job and nothing else
(the token itself, and the lease it renews, are domain/job_identity/job_tokens.py's)."""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job, JobArtifact, JobCounts, MoveFields, ReportQuota
from chalicelib.core.projects import Project
from chalicelib.core.reports import SENT_FROM_OUTSIDE, counted_tests, failure_marks, sent_from_outside
from chalicelib.core.status import Event, Status
from chalicelib.domain.builds.job_environment import job_environment
from chalicelib.domain.configuration.job_overrides import (
    fetch_depth,
    job_configuration,
    job_warnings,
    runner_settings,
)
from chalicelib.domain.configuration.matrix import version_build_number
from chalicelib.domain.deployments.inline_deployments import deploys_in
from chalicelib.domain.execution import progress
from chalicelib.domain.forges.repository_credentials import clone_source
from chalicelib.domain.job_identity import id_tokens
from chalicelib.domain.job_identity.job_tokens import build_and_project
from chalicelib.domain.projects.request_variables import why_untrusted, withholds_secrets
from chalicelib.errors import Conflict, Forbidden, Invalid, NotFound
from chalicelib.executors import kinds
from chalicelib.protocol.job_spec import JobSpec
from chalicelib.store import blobs, logs, reports
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store.artifacts import artifact_key, stored_artifact
from chalicelib.store.uploads import presigned_upload

log = logging.getLogger(__name__)
# a runner's chunks are 1 MiB, and it keeps a job's log within 100 MiB and a few lines (protocol/logstream.py)
MAX_LOG_CHUNK = 127
MAX_LOG_CHUNK_BYTES = 2 * 1024 * 1024
MAX_ARTIFACT_BYTES = 5 * 1024**3  # one presigned PUT
MAX_ARTIFACTS = 1000
MAX_REPORTS_PER_CALL = 1000
MAX_REPORTS_PER_JOB = 100_000  # messages and tests together
# tests keys send from outside the build (POST /api/testresults/...): one full results file's, counted apart, so
# whoever may run builds cannot use up the room the build has for its own reports (and have its failures refused)
MAX_OUTSIDE_REPORTS_PER_JOB = 10_000
# the bytes those reports store (JSON, failure marks included): 100,000 reports of 64 KiB would be 6 GiB of a table
MAX_REPORT_BYTES_PER_JOB = 100 * 1024**2
MAX_OUTSIDE_REPORT_BYTES_PER_JOB = 10 * 1024**2  # two results files of 5 MiB, as stored
MAX_FIELD_LENGTH = 64 * 1024
MAX_REPORT_BYTES = 64 * 1024  # a report as stored (a DynamoDB item holds 400 KB at most)
_VERSION = re.compile(r"[0-9A-Za-z._+\-]{1,128}")
RESULTS = ("success", "failed", "cancelled")


# A container image is the build's own code, and on CodeBuild it runs the runner itself (its python3): for a pull
# request, whose author chose the image, the runner is not to be trusted with the project's credentials.
UNTRUSTED_IMAGE_CLONE = (
    "A pull request build in a container image of its own choosing gets no clone credentials: the image's own code "
    "runs Conveyor's runner, so it could take them. Build this private repository's pull requests with no image, "
    "in Ubuntu2204 (CodeBuild's curated image) or on a build agent."
)


def clone_credentials(job: Job) -> dict[str, str | None]:
    """The user name and password the job's runner fetches the repository with, handed once per attempt: the
    runner takes them before any script of the build runs, and a second request (a build script's, say) gets
    nothing but a Conflict. A pull request build in a container image of its author's choosing gets none."""
    build, project = build_and_project(job)
    source = clone_source(project)
    if source.credentials is None and source.ssh_key is None:
        raise NotFound("The job's repository needs no credentials.")
    if build.pull_request and kinds.of(job.executor).runner_in_users_image(job.run_on):
        raise Conflict(UNTRUSTED_IMAGE_CLONE)
    if not job_store.take_clone_credentials(job.job_id):
        raise Conflict("The job's clone credentials were handed out already: a job's runner takes them once.")
    if source.ssh_key is not None:
        return {"sshPrivateKey": source.ssh_key, "sshHostKey": source.ssh_host_key}
    assert source.credentials is not None
    return {"username": source.credentials[0], "password": source.credentials[1]}


def job_spec(job: Job, read: tuple[Build | None, Project | None] = (None, None)) -> JobSpec:
    """Everything the job's runner needs: the commit, the scripts, the variables, what to mask, the limits
    (``read``: the job's build and project as read with it, if they were)."""
    build, project = build_and_project(job, read)
    kind = kinds.of(job.executor)
    warnings = kind.runner_warnings(job)  # the log's first lines (after "Build started"): where the job runs
    environment = job_environment(project, build, job, warnings.append)
    warnings += job_warnings(build.configuration, job.spec)
    configuration = job_configuration(build.configuration, job.spec)  # with appveyor.yml's for: items for the job
    config = settings()
    # id_token: the request URL and token, the token masked as a secret is (none for a job that does not ask)
    oidc_variables, oidc_secrets = id_tokens.request_variables(
        id_tokens.Subject(project, build, job), config.runner_api_url, warnings.append
    )
    source = clone_source(project)
    return {
        "jobId": job.job_id,
        "jobName": job.name,
        "title": f"{project.name} {build.version}",
        "timeoutSeconds": kind.job_timeout(),
        "heartbeatSeconds": config.heartbeat_seconds,
        "source": {
            "url": source.url,
            "credentials": source.credentials is not None or source.ssh_key is not None,  # taken once, apart
            "ref": build.ref,
            "commitId": build.commit.get("commitId", ""),
            "depth": fetch_depth(configuration),
        },
        "configuration": runner_settings(configuration),  # a deployment's or a notification's settings stay here
        "variables": {**environment.variables, **oidc_variables},
        "secrets": [*environment.secrets, *oidc_secrets],
        "warnings": warnings,
        "cacheSave": not withholds_secrets(build),  # what it made is not restored by a build that gets secrets
        "inlineDeployments": deploys_in(project, build, job),  # before_deploy and after_deploy run for them
        "logTailOnFinish": True,  # the finish takes the log's last chunk (a runner asks: services before did not)
        # the service minted the ID token variables: the runner forwards ID token requests only then, and only to
        # this service's own route (appveyor.yml may name the variables too, and any URL in them)
        "idToken": bool(oidc_variables),
        "projectSlug": project.slug,  # the build folder's name: appveyor.yml may set APPVEYOR_PROJECT_SLUG
    }


def runner_package(job: Job) -> bytes:
    """The runner as a zip, for a job whose executor starts from an image of the user's (CodeBuild). The job's
    lease starts again: its runner heartbeats only once its libraries are installed."""
    from chalicelib.executors.runner_package import runner_zip  # read from disk only where it is asked for

    if not kinds.of(job.executor).fetches_runner:
        raise NotFound("The runner is fetched only by a CodeBuild job's buildspec.")
    job_store.renew_lease(job.job_id, int(time.time()) + settings().lease_seconds)
    return runner_zip()


def put_log_chunk(job: Job, index: int, body: bytes) -> None:
    """Store (or replace) one chunk of the job's running log."""
    if not 0 <= index <= MAX_LOG_CHUNK:
        raise Invalid(f"A log chunk's number is 0 to {MAX_LOG_CHUNK}.")
    if len(body) > MAX_LOG_CHUNK_BYTES:
        raise Invalid(f"A log chunk holds at most {MAX_LOG_CHUNK_BYTES:,} bytes.")
    logs.put_chunk(blobs.prefix_of(job), index, body)


def artifact_upload(job: Job, file_name: str, size: int) -> dict[str, Any]:
    """A presigned upload of one artifact of ``size`` bytes, under the job's own prefix."""
    if not 0 <= size <= MAX_ARTIFACT_BYTES:
        raise Invalid(f"An artifact is at most {MAX_ARTIFACT_BYTES:,} bytes.")
    try:
        key = artifact_key(blobs.prefix_of(job), file_name)
    except ValueError as error:
        raise Invalid(str(error)) from error
    return presigned_upload(key, size, "application/octet-stream")


def add_messages(job: Job, messages: list[dict[str, Any]]) -> None:
    """Store build messages and compilation messages the job's scripts reported."""
    _check_count(messages)
    stored = []
    for message in messages:
        kind = message.get("kind")
        if kind not in (reports.MESSAGE, reports.COMPILATION):
            raise Invalid("A message's kind is 'message' or 'compilation'.")
        if message.get("category") not in ("information", "warning", "error") or not message.get("message"):
            raise Invalid("A message needs its text and a category: information, warning or error.")
        stored.append((str(kind), _sized(_bounded({k: v for k, v in message.items() if k != "kind"}))))
    _take_quota(job, stored)
    reports.add_reports(job.job_id, stored)


def add_tests(job: Job, tests: list[dict[str, Any]], update: bool) -> None:
    """Store tests the job's scripts reported; an update changes the fields it carries of a test of that name."""
    _check_count(tests)
    if not all(isinstance(test, dict) and test.get("testName") for test in tests):
        raise Invalid("Every test needs its name (testName).")
    # the mark of a test sent from outside is the service's to set, never the build's
    fresh = [{k: v for k, v in _bounded(test).items() if k != SENT_FROM_OUTSIDE} for test in tests]
    first_reported: dict[str, datetime] = {}
    if update:
        before = reports.get_tests(job.job_id, [str(test["testName"]) for test in fresh])
        # what a key sent from outside (an item stored before issue 43) is no part of the build's own test
        before = {name: report for name, report in before.items() if not sent_from_outside(report)}
        merged = []
        for test in fresh:
            earlier = before.get(str(test["testName"]))
            merged.append({**(earlier.body if earlier else {}), **{k: v for k, v in test.items() if v is not None}})
        fresh = merged
        first_reported = {name: report.created for name, report in before.items()}
    sized = [(reports.TEST, _sized(test)) for test in fresh]
    stored = sized + failure_marks(sized)
    _take_quota(job, stored, len(sized))
    reports.add_reports(job.job_id, stored, first_reported)


def add_parsed_tests(job: Job, tests: list[dict[str, Any]], outside: bool = False) -> None:
    """Store the tests of a result file (domain/testing/result_files.py): each checked for size before any is stored,
    and the job's quota taken for all of them at once. Tests sent from outside the build (``outside``: marked so) get
    items of their own (store/reports.py), which never replace what the build reported, and a quota of their own."""
    sized = [(reports.TEST, _sized(_bounded(test))) for test in tests]
    stored = sized + failure_marks(sized)
    if outside:
        _take_outside_quota(job, stored, len(sized))
    else:
        _take_quota(job, stored, len(sized))
    reports.add_reports(job.job_id, stored)


def update_version(job: Job, version: str) -> None:
    """UpdateBuild -Version: the build's version, unique in its project as at start."""
    if not _VERSION.fullmatch(version):
        raise Invalid("A build version is 1 to 128 letters, digits, dots, dashes, underscores or plus signs.")
    build, project = build_and_project(job)
    if build.pull_request is not None:  # its author would choose the version a release of the project is made as
        raise Forbidden(
            f"A pull request's build keeps its version ({build.version}): UpdateBuild -Version is refused for it."
        )
    if (reason := why_untrusted(build)) is not None:  # as a pull request's: its variables shape its scripts
        raise Forbidden(f"This build keeps its version ({build.version}): {reason}. UpdateBuild -Version is refused.")
    number = version_build_number(project.version_format, version)
    if number is not None and number >= project.next_build_number:  # it would stop that build's start, or skip it
        raise Conflict(
            f"Build version '{version}' is the one the project's version format ({project.version_format}) gives "
            f"build {number}, which has not started yet: a build may not take a later build's version."
        )
    if version.lower() != build.version.lower():  # versions are unique regardless of case
        build_store.change_version(build, version)


@dataclass(frozen=True)
class Finish:
    """A runner's last word on its job: its result and why, how many log chunks it sent (``log_tail``: the log's
    last chunk, if the finish carries it, and ``log_tail_sent`` whether the runner sent a version of it before),
    and the artifacts it uploaded."""

    result: str
    message: str | None = None
    log_chunks: int = 0
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    log_tail: bytes | None = None
    log_tail_sent: bool = True


def finish(job: Job, said: Finish, build: Build | None = None) -> None:
    """The runner's last word: the log is sealed, the artifacts checked, the job ends and its token with it
    (``build``: the job's build, read with the job when its token named it)."""
    result, message, log_chunks, artifacts = said.result, said.message, said.log_chunks, said.artifacts
    if result not in RESULTS:
        raise Invalid(f"A job's result is one of {', '.join(RESULTS)}.")
    if not 0 <= log_chunks <= MAX_LOG_CHUNK + 1 or len(artifacts) > MAX_ARTIFACTS:
        raise Invalid("logChunks or artifacts out of range.")
    prefix = blobs.prefix_of(job)
    _seal_log(prefix, log_chunks, said.log_tail, said.log_tail_sent)
    stored = _stored_artifacts(prefix, artifacts)
    reported = result == "failed" and bool(message)
    if reported:
        reports.add_reports(job.job_id, [(reports.MESSAGE, {"message": message, "category": "error"})])
    # a job to which neither its runner nor a key reported anything (their quotas' counts, as its token was checked)
    # is counted without a read
    found = reports.reports_by_kind(job.job_id) if job.reported or job.reported_outside or reported else None
    counts = _counts(found, len(stored)) if found is not None else JobCounts(artifacts=len(stored))
    # the job as its token was checked (a consistent read): a cancel since still cancels it, through the move's
    # condition, and the move holds only while the token is this attempt's (a re-run claimed meanwhile is not ended)
    holder = job.token_hash
    if result == "cancelled" or Status(job.status) is Status.CANCELLING:  # the cancel's message stays: who, or why
        why = job.message if Status(job.status) is Status.CANCELLING and job.message else "Cancelled by a user."
        stopped = MoveFields(message=why, counts=counts, artifacts=stored, holder=holder)
        progress.end_job(job, Event.STOPPED, stopped, build)
        return
    tests = counted_tests(found[reports.TEST], found[reports.FAILED_MARK]) if found is not None else []
    if tests and job.deployment_id is None:  # before the move: whoever sees the job ended sees its tests' history
        _record_tests(job, build, tests)
    ended = MoveFields(message=message, counts=counts, artifacts=stored, holder=holder)
    progress.finish_job(job, result == "success", ended, build)


def _record_tests(job: Job, build: Build | None, tests: list[Any]) -> None:
    """The attempt's tests join their history; its failure is logged, never the job's (it has ended already)."""
    from chalicelib.domain.testing import tests_history  # loaded only by finishes that carry tests: cold start

    try:
        build = build or build_store.get_build(job.project_id, job.build_id)
        if build is not None:
            tests_history.record_job_tests(job, build, tests, datetime.now(UTC))
    except Exception:
        log.exception("job %s: its tests' history was not written", job.job_id)


def _seal_log(prefix: str, log_chunks: int, tail: bytes | None, tail_sent: bool) -> None:
    """The job's log made one object before the job ends: from the chunks sent and the tail its finish carries,
    which is bounded as a chunk is and written nowhere but under the job's own prefix."""
    if tail is not None and log_chunks == 0:
        raise Invalid("logTail is the log's last chunk: logChunks counts it, so it is 1 or more.")
    if tail is not None and len(tail) > MAX_LOG_CHUNK_BYTES:
        raise Invalid(f"logTail holds at most {MAX_LOG_CHUNK_BYTES:,} bytes, as a log chunk does.")
    try:
        logs.seal_log(prefix, log_chunks, tail, tail_sent)
    except logs.LogIncomplete as error:
        raise Conflict("The job's log is not all stored yet; send its missing chunks, then finish again.") from error


def job_counts(job_id: str, artifacts: int) -> JobCounts:
    """The job's counts, from what it reported."""
    return _counts(reports.reports_by_kind(job_id), artifacts)


def _counts(found: dict[str, list[Any]], artifacts: int) -> JobCounts:
    messages, compilation = found[reports.MESSAGE], found[reports.COMPILATION]
    tests = counted_tests(found[reports.TEST], found[reports.FAILED_MARK])  # each once, as the build reported it
    return JobCounts(
        messages=len(messages),
        compilation_messages=len(compilation),
        compilation_errors=sum(1 for m in compilation if m.body.get("category") == "error"),
        compilation_warnings=sum(1 for m in compilation if m.body.get("category") == "warning"),
        tests=len(tests),
        passed_tests=sum(1 for t in tests if t.body.get("outcome") == "Passed"),
        failed_tests=sum(1 for t in tests if t.body.get("outcome") == "Failed"),
        artifacts=artifacts,
    )


def _stored_artifacts(prefix: str, artifacts: list[dict[str, Any]]) -> list[JobArtifact]:
    """The artifacts the runner names that are in storage, with the size storage has (not the runner's word) and
    its ETag: what is served later must be this object (an upload URL outlives its job by minutes)."""
    from chalicelib.protocol.artifact_types import (
        canonical_type,  # the types a runner names, loaded only here: cold start
    )

    stored: dict[str, JobArtifact] = {}
    for artifact in artifacts:
        file_name = str(artifact.get("fileName") or "")
        try:
            found = stored_artifact(prefix, file_name)
        except ValueError:
            continue
        if found is None:
            continue
        stored[file_name] = JobArtifact(
            file_name=file_name,
            name=str(artifact.get("name") or file_name)[:256],
            type=canonical_type(artifact.get("type"), file_name, lambda _: None),
            size=found.size,
            created=datetime.now(UTC),
            etag=found.etag,
        )
    return list(stored.values())


def _check_count(items: list[Any]) -> None:
    if not isinstance(items, list) or not 0 < len(items) <= MAX_REPORTS_PER_CALL:
        raise Invalid(f"Send 1 to {MAX_REPORTS_PER_CALL} at a time.")


def _quota(stored: list[tuple[str, dict[str, Any]]], count: int | None) -> ReportQuota:
    """What ``stored`` takes of a quota: ``count`` reports (failure marks are not counted as reports, their bytes
    are), and the bytes of every item as stored."""
    size = sum(len(json.dumps(body)) for _, body in stored)
    return ReportQuota(len(stored) if count is None else count, size)


def _take_quota(job: Job, stored: list[tuple[str, dict[str, Any]]], count: int | None = None) -> None:
    limit = ReportQuota(MAX_REPORTS_PER_JOB, MAX_REPORT_BYTES_PER_JOB)
    passed = job_store.take_report_quota(job.job_id, _quota(stored, count), limit)
    if passed == "count":
        raise Conflict(f"A job keeps at most {MAX_REPORTS_PER_JOB:,} messages and tests.")
    if passed == "bytes":
        raise Conflict(f"A job keeps at most {MAX_REPORT_BYTES_PER_JOB:,} bytes of messages and tests (as JSON).")


def _take_outside_quota(job: Job, stored: list[tuple[str, dict[str, Any]]], count: int) -> None:
    limit = ReportQuota(MAX_OUTSIDE_REPORTS_PER_JOB, MAX_OUTSIDE_REPORT_BYTES_PER_JOB)
    passed = job_store.take_report_quota(job.job_id, _quota(stored, count), limit, outside=True)
    if passed is not None:
        cap = (
            f"{MAX_OUTSIDE_REPORTS_PER_JOB:,} tests"
            if passed == "count"
            else (f"{MAX_OUTSIDE_REPORT_BYTES_PER_JOB:,} bytes of tests (as JSON)")
        )
        raise Conflict(
            f"A job keeps at most {cap} sent from outside the build (with a key); the build's own reports are "
            "counted apart."
        )


def _sized(report: dict[str, Any]) -> dict[str, Any]:
    """The report, unless it is too big to keep: a 400 naming the limit."""
    if len(json.dumps(report)) > MAX_REPORT_BYTES:
        raise Invalid(f"A message or test is at most {MAX_REPORT_BYTES:,} bytes as JSON.")
    return report


def _bounded(fields: dict[str, Any]) -> dict[str, Any]:
    """A report's fields, each a string, number or null, texts cut at MAX_FIELD_LENGTH."""
    bounded: dict[str, Any] = {}
    for name, value in list(fields.items())[:32]:
        _utf8(str(name))
        if isinstance(value, str):
            _utf8(value)
            bounded[str(name)[:64]] = value[:MAX_FIELD_LENGTH]
        elif value is None or isinstance(value, bool | int | float):
            bounded[str(name)[:64]] = value
        else:
            raise Invalid(f"Field {str(name)[:64]} must be a string, a number or null.")
    return bounded


def _utf8(text: str) -> None:
    """A 400 for text UTF-8 cannot carry: JSON's \\ud800, a lone surrogate, names no test a key is made of."""
    try:
        text.encode()
    except UnicodeEncodeError as error:
        raise Invalid("A message or test holds text that is not valid Unicode (a lone surrogate).") from error
