"""A deployment of a build's artifacts to an environment, run as jobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class EnvironmentAtStart(FieldsRepr):
    """The environment a deployment went to, as it was when the deployment started (it may change or go later)."""

    environment_id: int
    name: str
    provider: str
    created: datetime
    updated: datetime | None = None


@dataclass(frozen=True, repr=False)
class InlineEntry(FieldsRepr):
    """An inline deployment's ``deploy:`` entry: its place in the build's configuration and its provider.

    Its settings stay in the build's stored configuration (secure ones as tokens), read again when it delivers."""

    entry: int  # the index in the build configuration's ``deployments``
    provider: str


@dataclass(frozen=True, repr=False)
class Deployment(FieldsRepr):
    account_id: int
    project_id: int
    deployment_id: int
    environment_id: int
    environment: EnvironmentAtStart
    build_id: int
    job_ids: list[str]
    status: str
    created: datetime
    build_job_id: str | None = None
    variables: dict[str, str] = field(default_factory=dict)
    started: datetime | None = None
    finished: datetime | None = None
    updated: datetime | None = None
    revision: int = 1
    project_slug: str | None = None  # None in deployments stored before it was kept
    inline: InlineEntry | None = None  # an appveyor.yml ``deploy:`` entry's (environment_id 0), not an environment's


@dataclass(frozen=True, repr=False)
class Shown(FieldsRepr):
    """A deployment with what its wire shape shows: its build, its jobs, and (when asked for) its project."""

    deployment: Deployment
    build: Build | None
    jobs: list[Job]
    project: Project | None = None
