"""What a job left: its log and its artifacts, for callers who may view its build; and the artifact permalink,
the file of the newest build that matches a query."""

from __future__ import annotations

from dataclasses import dataclass, replace

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.logs import ByteRange, LogReply
from chalicelib.core.status import Status
from chalicelib.domain.builds.build_lookup import find_job
from chalicelib.domain.projects.project_lookup import find_project
from chalicelib.domain.projects.request_variables import withholds_secrets
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Conflict, Invalid, NotFound
from chalicelib.store import artifacts as artifact_store
from chalicelib.store import blobs, log_reads
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store

PERMALINK_BUILDS = 100  # the newest builds (of the branch, when one is named) a permalink looks through


@dataclass(frozen=True)
class ArtifactQuery:
    """Which build's file a permalink names (AppVeyor's ``branch``, ``tag``, ``job``, ``all`` and ``pr``)."""

    branch: str | None = None
    tag: str | None = None
    job: str | None = None  # the job's name: needed when the build has several jobs
    all_builds: bool = False  # failed and cancelled builds too, not only successful ones
    pull_requests: bool | None = None  # only pull request builds (True), none (False), or either


def job_log(caller: Caller, job_id: str, wanted: ByteRange | None) -> LogReply:
    """The job's log as the API serves it (``wanted``: the bytes a Range asks for)."""
    job, _ = find_job(caller, job_id)
    return log_reads.read_log(blobs.prefix_of(job), wanted)


def artifact_url(caller: Caller, job_id: str, file_name: str) -> str:
    """A short-lived URL of one of the job's artifacts."""
    job, _ = find_job(caller, job_id)
    return _url_of(job, file_name, "")


def _url_of(job: Job, file_name: str, where: str) -> str:
    """A short-lived URL of the job's artifact ``file_name``; NotFound (saying ``where``) when it has none, Conflict
    when its object is not the one the job's finish recorded (an upload URL used after the job ended)."""
    url = None
    recorded = next((artifact for artifact in job.artifacts if artifact.file_name == file_name), None)
    if recorded is not None:
        try:
            url = artifact_store.artifact_url(blobs.prefix_of(job), file_name, etag=recorded.etag)
        except artifact_store.ArtifactChanged:
            raise Conflict(f"Artifact '{file_name}'{where} changed after its job ended: it is not served.") from None
    if url is None:
        raise NotFound(f"Artifact '{file_name}' not found{where}.")
    return url


def last_artifact_url(caller: Caller, account_name: str, slug: str, file_name: str, query: ArtifactQuery) -> str:
    """A short-lived URL of ``file_name`` as the newest matching build's job left it (the permalink).

    Asked without a key, it passes over pull requests' builds unless ``pr`` says otherwise: their branch is their
    target's, so a README's ``?branch=master`` link would otherwise hand anyone a fork's file (AppVeyor's does).
    """
    project = find_project(caller, account_name, slug)
    if caller.is_visitor and query.pull_requests is None:
        query = replace(query, pull_requests=False)
    for build in build_store.list_builds(project.project_id, None, PERMALINK_BUILDS, branch=query.branch):
        if not _matches(build, query):
            continue
        job = _job_named(job_store.get_jobs(build.job_ids), query.job)
        if job is None:
            continue
        return _url_of(job, file_name, f" in build {build.version}")
    kind = "finished" if query.all_builds else "successful"
    raise NotFound(f"No {kind} build of the project matches (among its newest {PERMALINK_BUILDS}).")


def _matches(build: Build, query: ArtifactQuery) -> bool:
    if not (Status(build.status).finished if query.all_builds else build.status == Status.SUCCESS):
        return False
    if query.tag is not None and build.ref != f"refs/tags/{query.tag}":
        return False
    if query.pull_requests is None:
        return True
    if query.pull_requests:
        return build.pull_request is not None
    # pr=false (a visitor's too): the project's own builds, not one whose code or variables someone else chose
    return not withholds_secrets(build)


def _job_named(jobs: list[Job], name: str | None) -> Job | None:
    """The job of that name (None when the build has none), or the build's one job when no name is given."""
    if name is not None:
        return next((job for job in jobs if job.name == name), None)
    if len(jobs) != 1:
        names = ", ".join(f"'{job.name}'" for job in jobs[:5])
        raise Invalid(f"The build has {len(jobs)} jobs: name one with job= ({names}).")
    return jobs[0]
