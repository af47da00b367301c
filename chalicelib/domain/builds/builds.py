"""Builds: starting one for a branch, a commit or a pull request; re-running, cancelling, deleting it."""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from chalicelib.core.builds import Build
from chalicelib.core.configuration import Configuration
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.core.status import Event, Status
from chalicelib.domain.builds.build_lookup import BUILD_NOT_FOUND, find_build_by_id
from chalicelib.domain.configuration import filters, job_overrides, unhonoured
from chalicelib.domain.configuration.matrix import MatrixJob, build_version, matrix_jobs
from chalicelib.domain.configuration.yamlconfig import merge_repository_file, read_repository_file
from chalicelib.domain.execution import progress, routing
from chalicelib.domain.forges import commit_statuses
from chalicelib.domain.forges.repositories import unserved
from chalicelib.domain.forges.repository_credentials import clone_source
from chalicelib.domain.projects import request_variables
from chalicelib.domain.projects.project_settings import MAX_BUILD_NUMBER, MAX_CONFIGURATION_BYTES
from chalicelib.domain.projects.projects import find_project
from chalicelib.domain.shared import outbox
from chalicelib.domain.shared.validation import MAX_TEXT_LENGTH
from chalicelib.domain.team.access import PROJECT_NOT_FOUND, Right, project_denies
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Conflict, Forbidden, Invalid, NotFound
from chalicelib.executors import kinds
from chalicelib.scm import forges
from chalicelib.shapes.time import timestamp
from chalicelib.store import blobs, build_states, counters, job_moves, members, reports
from chalicelib.store import builds as store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store

if TYPE_CHECKING:
    from chalicelib.scm import git, git_commits

EMPTY_MATRIX = "The build matrix is empty: every job is excluded."
_JOB_ID_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class PullRequest:
    """A pull request as its webhook names it."""

    number: int
    title: str = ""
    head_repository: str = ""  # "owner/repo" its head is in (a fork's, maybe)
    head_branch: str = ""


@dataclass(frozen=True)
class StartRequest:
    account_name: str
    project_slug: str
    branch: str | None = None
    commit_id: str | None = None
    pull_request_id: int | None = None
    environment_variables: dict[str, str] = field(default_factory=dict)
    tag: str | None = None  # Conveyor's: AppVeyor's API starts no tag build


def start_build(caller: Caller, request: StartRequest) -> tuple[Build, list[Job]]:
    """Resolve the commit, fix configuration, matrix and version, and queue one message per job."""
    project = find_project(caller, request.account_name, request.project_slug, Right.RUN_BUILD)
    request_variables.check_request_variables(request.environment_variables)
    if request.pull_request_id is not None and (request.branch or request.commit_id or request.tag):
        raise Invalid("A pull request build takes no branch, commitId or tag.")
    if request.tag is not None:
        if request.branch or request.commit_id:  # an older commit would pass for the tag's release
            raise Invalid("A tag build takes no branch or commitId: the tag's commit is what it builds.")
        # as a pushed tag builds: APPVEYOR_REPO_BRANCH is the tag's name (a tag is on no branch)
        tag_ref = f"refs/tags/{request.tag}"
        revision = _resolve(project, request.tag, request.commit_id, None, ref=tag_ref)
    else:
        revision = _resolve(project, request.branch, request.commit_id, request.pull_request_id)
    # forced: started through the API (AppVeyor's "New build"), not by a push; APPVEYOR_FORCED_BUILD says so
    pull_request = _pull_request_fields(request.pull_request_id, revision)
    flags = {"forced": True, **_untrusted_flag(caller, project, request.environment_variables)}
    return _create(project, revision, pull_request, request.environment_variables, flags)


def rerun_build(caller: Caller, build_id: int, incomplete: bool) -> tuple[Build, list[Job]]:
    """A new build of the same commit, or (``incomplete``) the failed and cancelled jobs of this one again."""
    build, project = find_build_by_id(caller, build_id, Right.RUN_BUILD)
    # a build started before such names were refused is not run again with them
    request_variables.check_request_variables(build.request_variables)
    if not incomplete:
        # the same commit: a pull request's merge as it was (AppVeyor's re-build), with its head as it was
        revision = _resolve(project, build.branch, build.commit["commitId"], None, ref=build.ref)
        # its variables are started again by this caller, and stay untrusted if they were
        flags = {"reBuild": True, **_untrusted_flag(caller, project, build.request_variables)}
        if build.flags.get(request_variables.UNTRUSTED_FLAG):
            flags[request_variables.UNTRUSTED_FLAG] = True
        return _create(project, revision, build.pull_request, build.request_variables, flags)
    jobs = job_store.get_jobs(build.job_ids)
    again = [job for job in jobs if job.status in (Status.FAILED, Status.CANCELLED)]
    if not again:
        raise Conflict(f"No failed or cancelled jobs in build with ID {build.build_id}")
    requeued = [job.job_id for job in again if job_moves.transition(job.job_id, Status(job.status), Event.REQUEUE)]
    if not requeued:
        raise Conflict(f"No failed or cancelled jobs in build with ID {build.build_id}")
    for job_id in requeued:  # the attempt starts afresh: its log, artifacts and reports are the new run's alone
        blobs.delete_prefix(blobs.job_prefix(build.account_id, build.project_id, build.build_id, job_id))
    reports.delete_reports(requeued)
    store.set_flags(build, {**build.flags, "reRunIncomplete": True})
    progress.refresh_build(build.project_id, build.build_id)
    outbox.send_jobs([job for job in again if job.job_id in requeued])
    return _reread(build)


def cancel_build(caller: Caller, account_name: str, slug: str, version: str) -> None:
    """Queued jobs end cancelled at once; running ones are told to stop. A finished build stays as it is."""
    project = find_project(caller, account_name, slug, Right.RUN_BUILD)
    build = store.get_build_by_version(project.project_id, version)
    if build is None:
        raise NotFound(BUILD_NOT_FOUND)
    progress.cancel_jobs(build, cancelled_by(caller))


def cancelled_by(caller: Caller) -> str:
    """A cancelled job's message, naming who cancelled it by their full name as the team lists it (never their
    e-mail: a public project's log is read by anyone). An account's owner is named after their e-mail's local part
    until they set a name (domain/team/accounts.py): that name is theirs only once it differs."""
    member = members.get_member(caller.account_id, caller.user_id)
    who = member.full_name.strip() if member is not None and member.full_name else ""
    if member is not None and who == member.email.split("@")[0].strip():
        who = ""
    return f"Cancelled by {who}." if who else "Cancelled by a user."


def delete_build(caller: Caller, build_id: int) -> None:
    """Cancel the build if it runs, then remove it, its jobs, logs and artifacts."""
    build, project = find_build_by_id(caller, build_id, Right.VIEW)
    if project_denies(caller, project, Right.DELETE):  # the role's DeleteProjectBuilds, narrowed by the project
        raise Forbidden(f"Your role '{caller.role_name}' may not delete this project's builds.")
    progress.cancel_jobs(build, "Cancelled: the build was deleted.")
    build_states.delete_build(build)
    blobs.delete_prefix(blobs.build_prefix(build.account_id, build.project_id, build.build_id))
    latest = store.latest_build(project.project_id)
    if latest is None or latest.build_id < build.build_id:
        build_states.replace_last_build(project.account_id, project.slug, latest)


# Starting.


def _resolve(
    project: Project, branch: str | None, commit_id: str | None, pull_request_id: int | None, ref: str | None = None
) -> git.Revision:
    if project.repository_scm != "git":
        raise Invalid(f"Builds of {project.repository_scm} repositories are not supported: Conveyor runs git only.")
    pull_ref = merge_ref = None
    if pull_request_id is not None:
        # its merge with the target branch, where the forge keeps one, is built rather than its head, as AppVeyor does
        pull_ref, merge_ref = forges.of(project.repository_type).pull_refs(pull_request_id)
    elif ref is not None and not ref.startswith("refs/heads/"):
        pull_ref = ref
    source = clone_source(project)
    if not source.url:
        raise Invalid(unserved(project.repository_type))
    from chalicelib.scm import git, git_remote  # dulwich loads only when a build starts: cold start
    from chalicelib.scm.transport import SshAccess

    ssh = None
    if source.ssh_key is not None:  # the first fetch learns the server's host key; later ones must see it again
        ssh = SshAccess(source.ssh_key, source.ssh_host_key, partial(project_store.note_ssh_host_key, project))

    try:
        return git.resolve(
            source.url,
            branch=branch or project.repository_branch,
            commit_id=commit_id,
            pull_ref=pull_ref,
            merge_ref=merge_ref,
            credentials=source.credentials,
            ssh=ssh,
        )
    except git.RevisionNotFound as error:
        raise NotFound(str(error)) from error
    except git_remote.SourceError as error:
        raise Invalid(str(error)) from error


def resolve_revision(
    project: Project, branch: str | None, commit_id: str | None, pull_request_id: int | None, ref: str | None = None
) -> git.Revision:
    """What a build of the project would build: the commit of a branch, pull request or other ref."""
    return _resolve(project, branch, commit_id, pull_request_id, ref=ref)


def merged_configuration(
    project: Project, revision: git.Revision, branch: str | None = None
) -> tuple[Configuration, str]:
    """The configuration and version format a build of ``revision`` runs with: the project's, with appveyor.yml.
    ``branch`` picks appveyor.yml's for: item or list entry when it is not the revision's own (a pull request built
    from its branch is picked by its target, as its filters are)."""
    configuration, version_format = project.configuration, project.version_format
    if revision.service_yml is not None and not project.ignore_service_yml:
        configuration, version_format = merge_repository_file(
            configuration, version_format, revision.service_yml, branch=branch or revision.branch
        )
    elif project.settings_yaml is not None:  # settings with for: items or a list: read for the branch, as a file
        configuration, read_format = read_repository_file(project.settings_yaml, branch or revision.branch)
        version_format = read_format or version_format
    return configuration, version_format


def start_webhook_build(
    project: Project,
    revision: git.Revision,
    configuration: Configuration,
    version_format: str,
    pull_request: PullRequest | None,
    pushed: filters.PushedCommit | None = None,
) -> tuple[Build, list[Job]]:
    """Queue a build a repository's webhook asked for: it acts for the project, so no caller's rights apply.
    ``pushed``: the commit as the filters saw it, for the jobs appveyor.yml's for: items filter."""
    fields = None if pull_request is None else _pull_request_fields(pull_request.number, revision, pull_request)
    return _queue(project, revision, configuration, version_format, _Origin(fields, pushed=pushed))


def start_scheduled_build(project: Project) -> tuple[Build, list[Job]]:
    """Queue the build a project's schedule asks for: its default branch's head, as an API build would build it
    (commit filters do not apply); it acts for the project, as a webhook does. APPVEYOR_SCHEDULED_BUILD says so."""
    return _create(project, _resolve(project, None, None, None), None, {}, {"scheduled": True})


def _untrusted_flag(caller: Caller, project: Project, variables: dict[str, str]) -> dict[str, bool]:
    """The flag of a build whose variables come from a caller who may not update the project's settings."""
    return {request_variables.UNTRUSTED_FLAG: True} if request_variables.untrusted(caller, project, variables) else {}


def _create(
    project: Project,
    revision: git.Revision,
    pull_request: dict[str, Any] | None,
    variables: dict[str, str],
    flags: dict[str, bool],
) -> tuple[Build, list[Job]]:
    configuration, version_format = merged_configuration(project, revision)
    return _queue(project, revision, configuration, version_format, _Origin(pull_request, variables, flags))


@dataclass(frozen=True)
class _Origin:
    """What a new build keeps of how it was started, besides its commit and configuration: the pull request it
    builds (its fields as the build keeps them), its starter's variables, its flags (forced, reBuild, scheduled,
    untrusted), and for a webhook's build the pushed commit its appveyor.yml's for: items filter its jobs by."""

    pull_request: dict[str, Any] | None = None
    variables: dict[str, str] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)
    pushed: filters.PushedCommit | None = None


def _queue(
    project: Project, revision: git.Revision, configuration: Configuration, version_format: str, origin: _Origin
) -> tuple[Build, list[Job]]:
    """Store a new build of ``revision`` with a job per cell of its matrix, and queue the jobs.

    Before anything is stored, the jobs ``origin.pushed`` skips are left out, and a configuration too big to store
    or an image name too long is refused. The build takes the project's next number (store/build_states.py
    ``add_build``) and keeps as messages the warnings of what Conveyor does not honour. Each job is placed on an
    executor (domain/execution/routing.py): one refused there, or asking for what Conveyor refuses, ends failed saying
    why; the others are sent to be dispatched (a build agent's waits for its agent to ask), and the commit's status is
    announced. The build and its jobs, as stored."""
    specs = matrix_jobs(configuration)
    if not specs:
        raise Invalid(EMPTY_MATRIX)
    if origin.pushed is not None:  # a webhook's build: for: items may skip some of its jobs, as filters skip builds
        specs = job_overrides.unskipped(configuration, specs, origin.pushed)
    configuration = job_overrides.with_job_notifications(configuration, specs)
    _check_size(configuration, version_format, revision.branch)
    routing.check_images([spec.image for spec in specs])
    number = project.next_build_number  # as read: taken in the step that stores the build, or the next one then
    now = datetime.now(UTC)
    build = Build(
        account_id=project.account_id,
        project_id=project.project_id,
        build_id=counters.next_value(counters.BUILDS),
        build_number=number,
        version=build_version(version_format, number, revision.branch),
        branch=revision.branch,
        ref=revision.ref,
        commit=_commit_fields(revision.commit),
        configuration=configuration,
        job_ids=[_new_job_id() for _ in specs],
        status=Status.QUEUED,
        created=now,
        pull_request=origin.pull_request,
        request_variables=origin.variables,
        flags={
            **origin.flags,
            "postsStatuses": commit_statuses.reports_statuses(project),
        },  # said once, not looked up again
        project_slug=project.slug,
    )
    new_jobs = [_job(build, job_id, spec, now) for job_id, spec in zip(build.job_ids, specs, strict=True)]
    # a build its starter's variables shape goes, as a pull request's, only to build agents that take pull requests
    untrusted = request_variables.withholds_secrets(build)
    jobs, refused = routing.place(new_jobs, untrusted)
    refused |= unhonoured.refusals(configuration, jobs, refused, routing.outside_image, routing.provides_setup)
    warned = unhonoured.warnings(configuration, jobs, routing.provides_setup)
    said = [{"category": "warning", "message": text, "created": timestamp(now)} for text in warned]
    build = replace(build, messages=said)
    stored = build_states.add_build(
        build, jobs, lambda taken: build_version(version_format, taken, revision.branch), untrusted
    )
    if stored is None:  # deleted while the build was starting
        raise NotFound(PROJECT_NOT_FOUND)
    build = stored
    for job in jobs:
        if job.job_id in refused:
            routing.refuse(job, refused[job.job_id])
    outbox.send_jobs([job for job in jobs if job.job_id not in refused and not kinds.of(job.executor).pulled])
    commit_statuses.announce(project, build)
    return _reread(build) if refused else (build, jobs)


def _check_size(configuration: Configuration, version_format: str, branch: str) -> None:
    """Refuse, before anything is stored, a build whose configuration (the project's with the repository's
    appveyor.yml) would not fit its DynamoDB item, or whose version could be too long to be looked up by."""
    size = len(json.dumps(configuration))
    if size > MAX_CONFIGURATION_BYTES:
        raise Invalid(
            f"The build's configuration (the project's merged with appveyor.yml) is {size} bytes long; "
            f"at most {MAX_CONFIGURATION_BYTES} are allowed."
        )
    longest = build_version(version_format, MAX_BUILD_NUMBER, branch)
    if len(longest) > MAX_TEXT_LENGTH:
        raise Invalid(
            f"The build version could be {len(longest)} characters long; at most {MAX_TEXT_LENGTH} are allowed."
        )


def _job(build: Build, job_id: str, spec: MatrixJob, now: datetime) -> Job:
    return Job(
        job_id=job_id,
        build_id=build.build_id,
        project_id=build.project_id,
        account_id=build.account_id,
        number=spec.number,
        name=spec.name,
        spec={
            "image": spec.image,
            "configuration": spec.configuration,
            "platform": spec.platform,
            "variables": list(spec.variables),
            **job_overrides.spec_fields(build.configuration, spec),
        },
        allow_failure=spec.allow_failure,
        status=Status.QUEUED,
        created=now,
        project_slug=build.project_slug,
    )


def _commit_fields(commit: git_commits.Commit) -> dict[str, Any]:
    return {
        "commitId": commit.sha,
        "message": commit.message,
        "messageExtended": commit.message_extended,
        "authorName": commit.author_name,
        "authorEmail": commit.author_email,
        "committerName": commit.committer_name,
        "committerEmail": commit.committer_email,
        "committed": commit.committed.isoformat(),
    }


def _pull_request_fields(
    pull_request_id: int | None, revision: git.Revision, event: PullRequest | None = None
) -> dict[str, Any] | None:
    """A pull request as the build keeps it, in AppVeyor's words: its number and title, its head's commit, and the
    repository and branch of its head, where the forge's webhook named them."""
    if pull_request_id is None:
        return None
    fields = {
        "pullRequestId": str(pull_request_id),
        "pullRequestName": (event.title if event else "") or revision.pushed.message,
        "pullRequestHeadCommitId": revision.pull_head or revision.commit.sha,
    }
    if event and event.head_repository:
        fields["pullRequestHeadRepository"] = event.head_repository
    if event and event.head_branch:
        fields["pullRequestHeadBranch"] = event.head_branch
    return fields


def _new_job_id() -> str:
    return "".join(secrets.choice(_JOB_ID_ALPHABET) for _ in range(16))


def _reread(build: Build) -> tuple[Build, list[Job]]:
    fresh = store.get_build(build.project_id, build.build_id)
    if fresh is None:
        raise NotFound(BUILD_NOT_FOUND)
    return fresh, job_store.get_jobs(fresh.job_ids)
