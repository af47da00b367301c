"""A job's counts and artifacts as the store keeps them (JobModel.counts, .artifacts), read in their older form too,
and the migration that rewrites that form."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from pynamodb.expressions.condition import Condition

from chalicelib.core.jobs import JobArtifact, JobCounts
from chalicelib.store.models import JobModel
from chalicelib.store.transactions import rewrite_unchanged

# A job keeps its counts and artifacts (JobModel.counts, .artifacts) in the store's own form: JobCounts' and
# JobArtifact's field names, ISO 8601 times. Jobs written before kept them as the API showed them ("messagesCount",
# "fileName", AppVeyor's timestamps): they are read as they are, and `conveyor migrate` rewrites them.
_OLD_COUNT_NAMES = {
    "messagesCount": "messages",
    "compilationMessagesCount": "compilation_messages",
    "compilationErrorsCount": "compilation_errors",
    "compilationWarningsCount": "compilation_warnings",
    "testsCount": "tests",
    "passedTestsCount": "passed_tests",
    "failedTestsCount": "failed_tests",
    "artifactsCount": "artifacts",
}


def counts_item(counts: JobCounts) -> dict[str, int]:
    return asdict(counts)


def counts_from_item(item: dict[str, Any] | None) -> JobCounts:
    """The counts a job's item holds, in either form; none (all 0) for a job that has not ended."""
    named = {_OLD_COUNT_NAMES.get(name, name): value for name, value in (item or {}).items()}
    return JobCounts(**{name: int(named[name]) for name in JobCounts.__dataclass_fields__ if name in named})


def artifact_item(artifact: JobArtifact) -> dict[str, Any]:
    return {**asdict(artifact), "created": artifact.created.isoformat()}


def artifacts_from_items(items: list[dict[str, Any]] | None) -> list[JobArtifact]:
    """The artifacts a job's item holds, in either form."""
    return [_artifact_from_item(item) for item in items or []]


def _artifact_from_item(item: dict[str, Any]) -> JobArtifact:
    if "fileName" in item:  # as the API showed it
        item = {"file_name": item["fileName"], **{name: item[name] for name in ("name", "type", "size", "created")}}
    return JobArtifact(
        file_name=str(item["file_name"]),
        name=str(item["name"]),
        type=str(item["type"]),
        size=int(item["size"]),
        created=datetime.fromisoformat(item["created"]),  # AppVeyor's seven fractional digits read as six
        etag=item.get("etag"),  # artifacts stored before ETags were recorded have none
    )


def _is_old_form(model: JobModel) -> bool:
    return any(name in _OLD_COUNT_NAMES for name in model.counts or {}) or any(
        "fileName" in artifact for artifact in model.artifacts or []
    )


def rewrite_old_counts_and_artifacts() -> int:
    """Jobs whose counts or artifacts are still kept as the API showed them: rewritten in the store's own form
    (unless they changed meanwhile: a re-run); how many. A Scan, for migrations only."""

    def rewrite(model: JobModel) -> tuple[list[Any], Condition] | None:
        if not _is_old_form(model):
            return None
        actions: list[Any] = []  # only what the job holds: a job that kept no artifacts gets no empty list
        if model.counts is not None:
            actions.append(JobModel.counts.set(counts_item(counts_from_item(model.counts))))
        if model.artifacts is not None:
            artifacts = artifacts_from_items(model.artifacts)
            actions.append(JobModel.artifacts.set([artifact_item(artifact) for artifact in artifacts]))
        return actions, _unchanged(JobModel.counts, model.counts) & _unchanged(JobModel.artifacts, model.artifacts)

    return rewrite_unchanged(JobModel.scan(JobModel.counts.exists() | JobModel.artifacts.exists()), rewrite)


def _unchanged(attribute: Any, value: Any) -> Any:
    return attribute.does_not_exist() if value is None else attribute == value
