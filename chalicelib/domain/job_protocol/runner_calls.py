"""What a runner reports of its one job with its job token: its log, artifacts and version, and its finish."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job, JobArtifact, JobCounts, MoveFields
from chalicelib.core.reports import counted_tests
from chalicelib.core.status import Event, Status
from chalicelib.domain.configuration.matrix import version_build_number
from chalicelib.domain.execution import progress
from chalicelib.domain.job_identity.job_tokens import build_and_project
from chalicelib.domain.projects.request_variables import why_untrusted
from chalicelib.errors import Conflict, Forbidden, Invalid
from chalicelib.store import blobs, logs, reports
from chalicelib.store import builds as build_store
from chalicelib.store.artifacts import artifact_key, stored_artifact
from chalicelib.store.uploads import presigned_upload

log = logging.getLogger(__name__)
# a runner's chunks are 1 MiB, and it keeps a job's log within 100 MiB and a few lines (protocol/logstream.py)
MAX_LOG_CHUNK = 127
MAX_LOG_CHUNK_BYTES = 2 * 1024 * 1024
MAX_ARTIFACT_BYTES = 5 * 1024**3  # one presigned PUT
MAX_ARTIFACTS = 1000
_VERSION = re.compile(r"[0-9A-Za-z._+\-]{1,128}")
RESULTS = ("success", "failed", "cancelled")


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
