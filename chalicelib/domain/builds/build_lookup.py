"""Reads of builds and their jobs, as the API shows them: every one a GetItem or a Query on a key or an index.

Apart from domain/builds/builds.py (starting, re-running, cancelling, deleting), so that a function's first request
that only reads loads none of what starts a build (the matrix, appveyor.yml, repositories: docs/architecture.md,
"What a cold start loads").
"""

from __future__ import annotations

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.domain.projects.project_lookup import find_project, with_its_project
from chalicelib.domain.team.access import Right, require_right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import NotFound
from chalicelib.store import builds as store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store

BUILD_NOT_FOUND = "Build not found or access denied."


def find_build_by_id(caller: Caller, build_id: int, right: Right) -> tuple[Build, Project]:
    """A build of the caller's account by id, if the caller may exercise ``right`` on its project."""
    return with_its_project(caller, store.get_build_by_id(build_id), right, BUILD_NOT_FOUND)


def find_job(caller: Caller, job_id: str) -> tuple[Job, Build]:
    """A job the caller may view, with its build."""
    job = job_store.get_job(job_id)
    if job is None or job.account_id != caller.account_id:
        raise NotFound("Job not found or access denied.")
    build = store.get_build(job.project_id, job.build_id)
    project = project_store.get_project_by_id(caller.account_id, job.project_id)
    if build is None or project is None:
        raise NotFound("Job not found or access denied.")
    require_right(caller, project, Right.VIEW)
    return job, build


def last_build(caller: Caller, account_name: str, slug: str, branch: str | None = None) -> tuple[Project, Build | None]:
    project = find_project(caller, account_name, slug)
    if branch is None:
        return project, store.latest_build(project.project_id)
    build = store.latest_build_for_branch(project.project_id, branch)
    if build is None:
        raise NotFound(f"No builds of branch '{branch}' found.")
    return project, build


def build_by_version(caller: Caller, account_name: str, slug: str, version: str) -> tuple[Project, Build]:
    project = find_project(caller, account_name, slug)
    build = store.get_build_by_version(project.project_id, version)
    if build is None:
        raise NotFound(BUILD_NOT_FOUND)
    return project, build


def history(
    caller: Caller, account_name: str, slug: str, records: int, start_build_id: int | None, branch: str | None
) -> tuple[Project, list[Build]]:
    """A page of builds, newest first, older than ``start_build_id`` (exclusive)."""
    project = find_project(caller, account_name, slug)
    return project, store.list_builds(project.project_id, start_build_id, records, branch)


def jobs_of(build: Build) -> list[Job]:
    return job_store.get_jobs(build.job_ids)
