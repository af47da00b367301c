"""A job: one cell of a build's matrix, or one delivery of a deployment, claimed by one runner at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Job:
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
    counts: dict[str, int] = field(default_factory=dict)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0
    lease_expires: int | None = None
    deployment_id: int | None = None
    agent: str | None = None
    started: datetime | None = None
    finished: datetime | None = None
    updated: datetime | None = None
