"""Incoming repository webhooks: find the project by its webhook id, check the delivery is genuine, and start
the build the event asks for unless a filter says otherwise (domain/configuration/filters.py); rolling builds cancel the
branch's open builds first.

A webhook acts for its project: the id in its URL (and the secret, when the project has one) is its credential,
so no caller's rights apply. Commit filters apply here only, never to builds started through the API.
A delivery starts at most one build: it is remembered by the provider's delivery id and, when signed, by its
signature and body, so a captured signed body sent again under a new delivery id starts nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chalicelib.core.builds import Build
from chalicelib.core.configuration import Configuration
from chalicelib.core.projects import Project
from chalicelib.core.status import Status
from chalicelib.domain.builds import builds
from chalicelib.domain.configuration import filters, job_overrides
from chalicelib.domain.configuration.matrix import matrix_jobs
from chalicelib.domain.execution import progress
from chalicelib.domain.shared.secrets import WEBHOOK_SECRET_FIELD, decrypt, project_owner
from chalicelib.errors import Invalid, NotFound
from chalicelib.scm import forges
from chalicelib.scm.hook_events import HookEvent
from chalicelib.store import builds as build_store
from chalicelib.store import projects as project_store
from chalicelib.store import webhooks as store

if TYPE_CHECKING:
    from chalicelib.scm import git

ROLLING_WINDOW = 50  # a branch's newest builds a rolling push looks at for open ones
ROLLED = "Cancelled: a newer commit was pushed and the project has rolling builds."


@dataclass(frozen=True)
class Delivery:
    """One webhook request: which hook (the URL's provider and id), its headers, its body as sent."""

    provider: str
    webhook_id: str
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class Outcome:
    """The build started, or why none was."""

    build: Build | None = None
    message: str | None = None


def receive(project: Project, delivery: Delivery, payload: Any) -> Outcome:
    """Handle a delivery to the project's hook: ``payload`` is its body parsed, once ``authenticate`` passed it."""
    event = forges.read_event(delivery.provider, delivery.headers, payload)
    delivered = forges.delivery_id(delivery.provider, delivery.headers)
    if delivered and not store.claim_delivery(project.project_id, delivered):
        return Outcome(message=f"Delivery '{delivered}' was handled already; nothing more is started.")
    # The delivery id is not signed: a captured body and its signature, sent again under a new id, is a replay.
    digest = _signed_digest(project, delivery)
    if digest and not store.claim_signed_delivery(project.project_id, digest):
        return Outcome(message="This signed delivery was received already; nothing more is started.")
    try:
        return _handle(project, event)
    except BaseException:
        if delivered:
            store.release_delivery(project.project_id, delivered)  # a redelivery gets another try
        if digest:
            store.release_signed_delivery(project.project_id, digest)
        raise


def find_hook_project(webhook_id: str) -> Project:
    """The project whose webhook URL carries this id; NotFound for any other."""
    project = project_store.get_project_by_webhook_id(webhook_id)
    if project is None:
        raise NotFound("No project has this webhook id.")
    return project


def authenticate(project: Project, delivery: Delivery) -> None:
    """Unauthorized unless the delivery carries the project's webhook secret (when it has one): GitLab sends it
    as X-Gitlab-Token, the others sign the body with it (X-Hub-Signature-256, Bitbucket's X-Hub-Signature)."""
    if not project.webhook_secret:
        return
    secret = decrypt(project_owner(project), WEBHOOK_SECRET_FIELD, project.webhook_secret)
    forges.hooked(delivery.provider).authenticate(delivery.headers, delivery.body, secret)


def _signed_digest(project: Project, delivery: Delivery) -> str | None:
    """A digest of (project, signature, body) for a delivery ``authenticate`` checked a signature of; else None."""
    signature = forges.hooked(delivery.provider).signature(delivery.headers)
    if not project.webhook_secret or signature is None:  # a forge that sends a token, not a signature (GitLab)
        return None
    digest = hashlib.sha256(f"{project.project_id}\n{signature}\n".encode())
    digest.update(delivery.body)
    return digest.hexdigest()


def _handle(project: Project, event: HookEvent) -> Outcome:
    """Start the build ``event`` asks for: the pull requests it opens or closes are noted, its commit resolved and
    the configuration merged with its appveyor.yml; nothing is started when the event is ignored, the commit or
    configuration cannot be read, a filter skips the commit or the build would have no job (the outcome says why).
    Rolling builds cancel the branch's open builds first."""
    if event.closed_source_branch:
        store.note_closed_pull_request(project.project_id, event.closed_source_branch)
    if event.ignored:
        return Outcome(message=event.ignored)
    if event.source_branch:
        store.note_open_pull_request(project.project_id, event.source_branch)
    try:
        revision = _revision(project, event)
        if project.skip_branches_without_service_yml and revision.service_yml is None:
            return Outcome(message=f"Skipped: no appveyor.yml or .appveyor.yml on '{event.branch}'.")
        configuration, version_format = builds.merged_configuration(project, revision, branch=event.branch)
    except (Invalid, NotFound) as error:
        return Outcome(message=f"Not built: {error.message}")
    pushed = _pushed_commit(project, event, revision, configuration)
    try:
        reason = filters.skip_reason(configuration, pushed)
    except Invalid as error:  # a /regex/ RE2 cannot run, stored before patterns were checked when saved
        return Outcome(message=f"Not built: {error.message}")
    reason = reason or _builds_nothing(configuration, pushed)
    if reason:
        return Outcome(message=reason)
    if project.rolling_builds and not event.is_tag:
        cancel_open_builds(project, revision.branch, event.pull_request_id)
    try:
        build, _ = builds.start_webhook_build(
            project, revision, configuration, version_format, _pull_request(event), pushed
        )
    except Invalid as error:
        return Outcome(message=f"Not built: {error.message}")
    return Outcome(build=build)


def _revision(project: Project, event: HookEvent) -> git.Revision:
    """The commit the event builds: a pull request's merge (or its head), a tag's, a branch's head; a pull request
    built from its branch where the forge keeps no pull request refs."""
    if event.build_source_branch:
        return builds.resolve_revision(project, event.source_branch, event.commit_id, None)
    return builds.resolve_revision(project, event.branch, event.commit_id, event.pull_request_id, event.ref)


def _pushed_commit(
    project: Project, event: HookEvent, revision: git.Revision, configuration: Configuration
) -> filters.PushedCommit:
    """The commit as commit filters and for: items see it: a pull request's head, not the forge's merge commit (its
    [skip ci], its author)."""
    commit = revision.pushed
    return filters.PushedCommit(
        branch=event.branch,
        title=commit.message,
        author_name=commit.author_name,
        author_email=commit.author_email,
        author_login=event.author_login,
        is_tag=event.is_tag,
        pull_request_id=event.pull_request_id,
        files=event.files,
        branch_has_pull_request=bool(configuration.get("skipBranchWithPullRequests"))
        and event.pull_request_id is None
        and store.branch_has_open_pull_request(project.project_id, event.branch),
    )


def _builds_nothing(configuration: Configuration, pushed: filters.PushedCommit) -> str | None:
    """Why a push builds nothing, when its matrix is empty or its for: items skip every job (it rolls nothing away
    either); None when it builds."""
    try:
        specs = matrix_jobs(configuration)
        if not specs:
            raise Invalid(builds.EMPTY_MATRIX)
        job_overrides.unskipped(configuration, specs, pushed)
    except Invalid as error:
        return f"Not built: {error.message}"
    return None


def _pull_request(event: HookEvent) -> builds.PullRequest | None:
    """The pull request the event builds, as its webhook names it; None for a push."""
    if event.pull_request_id is None:
        return None
    return builds.PullRequest(event.pull_request_id, event.pull_request_title, event.head_repository, event.head_branch)


def cancel_open_builds(project: Project, branch: str, pull_request_id: int | None) -> list[Build]:
    """Rolling builds: cancel the queued and running builds of the branch (of the pull request, for one)."""
    wanted = None if pull_request_id is None else str(pull_request_id)
    cancelled = []
    for build in build_store.list_builds(project.project_id, None, ROLLING_WINDOW, branch):
        number = build.pull_request["pullRequestId"] if build.pull_request else None
        if number == wanted and not Status(build.status).finished:
            progress.cancel_jobs(build, ROLLED)
            cancelled.append(build)
    return cancelled
