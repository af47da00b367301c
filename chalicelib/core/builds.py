"""A build: one run of a project's commit, made of jobs (its matrix)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalicelib.core.configuration import Configuration
from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class Build(FieldsRepr):
    """A build as stored: its commit, its configuration and the ids of its jobs."""

    account_id: int
    project_id: int
    build_id: int
    build_number: int
    version: str
    branch: str
    ref: str
    commit: dict[str, Any]
    configuration: Configuration
    job_ids: list[str]
    status: str
    created: datetime
    pull_request: dict[str, Any] | None = None
    request_variables: dict[str, str] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    started: datetime | None = None
    finished: datetime | None = None
    updated: datetime | None = None
    revision: int = 1
    project_slug: str | None = None  # its project's key, with account_id (builds stored before lack it)


@dataclass(frozen=True, repr=False)
class BuildSummary(FieldsRepr):
    """A build as the project list and badges show it, kept on its project: no jobs, no configuration."""

    build_id: int
    project_id: int
    build_number: int
    version: str
    branch: str
    ref: str
    commit: dict[str, Any]
    status: str
    created: datetime
    pull_request: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    started: datetime | None = None
    finished: datetime | None = None
    updated: datetime | None = None


def summary_of(build: Build) -> BuildSummary:
    return BuildSummary(
        build_id=build.build_id,
        project_id=build.project_id,
        build_number=build.build_number,
        version=build.version,
        branch=build.branch,
        ref=build.ref,
        commit=build.commit,
        status=build.status,
        created=build.created,
        pull_request=build.pull_request,
        messages=build.messages,
        started=build.started,
        finished=build.finished,
        updated=build.updated,
    )
