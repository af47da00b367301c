"""A build's state on its commit at the forge, where developers look: pending when queued and while it runs, then
its result (reference: scm-and-workflow.md §1).

Posting is a side effect on the notifications queue: a ReportStatus message names the build, and its handler posts
the build's state as it is when the message is handled, so late or repeated messages never put an older state
back. A forge that is down or slow is tried again later (RETRY_DELAYS); one that refuses, or is still failing after
the last try, leaves a warning among the build's messages. Neither fails nor delays the build.

One status per build (AppVeyor's default), on the commit the developer pushed: a pull request's head, not the
merge commit its build checked out. The token is the project's repository credential; a project without one
(a public repository, or a deploy key) posts nothing.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from urllib.parse import quote

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.messages import ReportStatus
from chalicelib.core.projects import Project
from chalicelib.core.repository_names import public_repository_name
from chalicelib.core.status import Status
from chalicelib.domain.forges.repository_credentials import CREDENTIALS, status_token
from chalicelib.domain.shared import outbox
from chalicelib.errors import Invalid
from chalicelib.scm import forges
from chalicelib.scm.forge import CommitStatus, Forge, StatusFailed
from chalicelib.shapes.time import timestamp
from chalicelib.store import builds as build_store
from chalicelib.store import projects as project_store

log = logging.getLogger(__name__)
CONTEXT = "continuous-integration/conveyor"  # AppVeyor's is continuous-integration/appveyor/{branch,pr}
RETRY_DELAYS = (30, 120, 600)  # seconds before each try again: the forge's outage or rate limit may pass
MAX_BUILD_MESSAGES = 50  # warnings the service adds to one build
_STATE = {Status.QUEUED: "pending", Status.STARTING: "pending", Status.RUNNING: "running", Status.CANCELLING: "running"}
_STATE |= {Status.SUCCESS: "success", Status.FAILED: "failed", Status.CANCELLED: "cancelled"}
_DESCRIPTIONS = {
    "pending": "Waiting for Conveyor build to complete",  # AppVeyor's words, which scrapers match
    "running": "Conveyor build is running",
    "success": "Conveyor build succeeded",
    "failed": "Conveyor build failed",
    "cancelled": "Conveyor build was cancelled",
}


def reports_statuses(project: Project) -> bool:
    """Whether the project's builds post commit statuses: a forge that takes them, and a token to post with."""
    has_token = project.repository_authentication == CREDENTIALS and bool(project.repository_password)
    return has_token and forges.with_statuses(project.repository_type) is not None


def announce(project: Project, build: Build) -> None:
    """Queue a post of a new build's state, when its project posts statuses; never raises."""
    try:
        if reports_statuses(project):
            outbox.send([ReportStatus(build.project_id, build.build_id)])
    except Exception:  # a status is never worth failing the write it follows
        log.exception("build %s: its commit status was not queued", build.build_id)


def announce_change(before: Build, after: Build) -> None:
    """Queue a post when a build starts running, or is queued again (a re-run of its failed jobs); its result is
    queued by its announcement (announce_final)."""
    state = _STATE.get(Status(after.status))
    if after.flags.get("postsStatuses") is False:  # its project posted none when it was queued (older builds: ask)
        return
    if state in ("pending", "running") and _STATE.get(Status(before.status)) != state:
        try:
            project = project_store.get_project_by_id(after.account_id, after.project_id)
        except Exception:  # the build's state is written: a status is never worth failing what follows it
            log.exception("build %s: its commit status was not queued", after.build_id)
            return
        if project is not None:
            announce(project, after)


def announce_final(project: Project, build: Build) -> None:
    """Queue the post of a finished build's result (its announcement calls this first: when the queue does not
    take it, the error makes the announcement come again, so a result is never left unposted)."""
    if reports_statuses(project) and not outbox.send([ReportStatus(build.project_id, build.build_id)]):
        raise RuntimeError(f"build {build.build_id}: its commit status was not queued; its announcement comes again")


def report(message: ReportStatus) -> None:
    """Post the build's state now; on a failure, queue a try again or say so among the build's messages."""
    build = build_store.get_build(message.project_id, message.build_id, consistent=True)
    if build is None:
        return
    project = project_store.get_project_by_id(build.account_id, build.project_id)
    forge = None if project is None else forges.with_statuses(project.repository_type)
    if project is None or forge is None:
        return
    posted: str | None = None
    for _ in range(3):  # a build that moved on while its state was posted is posted again, so the last post is its own
        state = _STATE.get(Status(build.status))
        if state is None or state == posted or (message.state and state != message.state and posted is None):
            return  # nothing to post, or a try again of a state the build has left: its new state's message posts it
        try:
            _post(project, forge, build, state)
        except StatusFailed as error:
            _failed(forge, build, message, state, error)
            return
        posted = state
        fresh = build_store.get_build(message.project_id, message.build_id, consistent=True)
        if fresh is None:
            return
        build = fresh


def _post(project: Project, forge: Forge, build: Build, state: str) -> None:
    try:
        credentials = status_token(project)
    except Invalid as error:
        raise StatusFailed(f"The repository credential cannot be used: {error.message}", retry=False) from None
    if credentials is None:
        return  # removed since the build started
    username, token = credentials
    status = CommitStatus(
        state=state,
        sha=_commit_of(build),
        context=f"{CONTEXT}/{'pr' if build.pull_request else 'branch'}",
        description=_DESCRIPTIONS[state],
        target_url=_dashboard_link(project, build),
        ref=_ref_of(build),
        build_number=build.build_number,
        is_tag=build.ref.startswith("refs/tags/"),
    )
    forge.post_status(public_repository_name(project), status, username, token)


def _commit_of(build: Build) -> str:
    """The commit the developer pushed: a pull request's head (its merge commit is GitHub's, and shows nowhere)."""
    head = (build.pull_request or {}).get("pullRequestHeadCommitId")
    return str(head or build.commit.get("commitId", ""))


def _ref_of(build: Build) -> str:
    """The branch the status belongs to: a pull request's source branch (where GitLab and Bitbucket show it)."""
    if build.ref.startswith("refs/tags/"):
        return build.ref.removeprefix("refs/tags/")
    source = (build.pull_request or {}).get("pullRequestHeadBranch")
    return str(source or build.branch)


def _dashboard_link(project: Project, build: Build) -> str | None:
    base = settings().base_url
    if not base:
        return None
    parts = ("projects", project.account_name, project.slug, "build", build.version)
    return f"{base.rstrip('/')}/#/" + "/".join(quote(part, safe="") for part in parts)


def _failed(forge: Forge, build: Build, message: ReportStatus, state: str, error: StatusFailed) -> None:
    log.warning("build %s: commit status %s not posted to %s: %s", build.build_id, state, forge.name, error)
    if error.retry and message.attempt < len(RETRY_DELAYS):
        again = ReportStatus(message.project_id, message.build_id, message.attempt + 1, state)
        if outbox.send([again], delay_seconds=RETRY_DELAYS[message.attempt]):
            return
    text = f"The build's status was not posted to its commit on {forge.name}: {error}"  # said once a build
    note = {"category": "warning", "message": text, "created": timestamp(datetime.now(UTC))}
    build_store.add_message(build.project_id, build.build_id, note, MAX_BUILD_MESSAGES)
