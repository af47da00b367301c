"""Status badges: which badge a project (or one of its branches) shows, found by the badge's unguessable id, or,
for a public project, by its GitHub or Bitbucket repository.

The badge URL is public (it sits in READMEs, also of private projects), so its id is the only secret: 128
random bits, given at project creation, or on first use to projects from before badges. A repository's name is
no secret: its badge shows only a public project, and only the one public project of that repository (AppVeyor's
rule), so a badge never stands for two projects.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from chalicelib.core.projects import Project
from chalicelib.core.status import Status
from chalicelib.domain.forges.repositories import MAX_REPOSITORY_NAME_LENGTH
from chalicelib.domain.team.access import PROJECT_NOT_FOUND
from chalicelib.errors import NotFound
from chalicelib.store import badges as store
from chalicelib.store import builds as build_store

BADGE_NOT_FOUND = "Status badge not found."
REPOSITORY_PROVIDERS = {"github": "gitHub", "bitbucket": "bitBucket"}  # how badge URLs name them, in any case
GREEN, RED, YELLOW, GREY = "#4c1", "#e05d44", "#dfb317", "#9f9f9f"


@dataclass(frozen=True)
class Badge:
    """What the right half of a badge says, and in which colour."""

    message: str
    color: str


@dataclass(frozen=True)
class BadgeTexts:
    """The words a badge URL may choose (AppVeyor's passingText, failingText, pendingText)."""

    passing: str = "passing"
    failing: str = "failing"
    pending: str | None = None  # None: the status itself (queued, running, ...)


NO_BUILDS = Badge("no builds", GREY)
_COLORS = {
    Status.QUEUED: GREY,
    Status.STARTING: YELLOW,
    Status.RUNNING: YELLOW,
    Status.CANCELLING: YELLOW,
    Status.CANCELLED: GREY,
}


def new_badge_id() -> str:
    """A fresh badge id: 32 hex digits from the system's CSPRNG."""
    return secrets.token_hex(16)


def badge_for_status(status: str | None, texts: BadgeTexts = BadgeTexts()) -> Badge:
    """The badge of a build in ``status`` (None: no build at all)."""
    if status is None:
        return NO_BUILDS
    if status == Status.SUCCESS:
        return Badge(texts.passing, GREEN)
    if status == Status.FAILED:
        return Badge(texts.failing, RED)
    if status in _COLORS:
        pending = texts.pending if texts.pending and status != Status.CANCELLED else None
        return Badge(pending or status, _COLORS[Status(status)])
    return Badge(status, GREY)  # a status this service does not know yet: shown as it is


def build_status(badge_id: str, branch: str | None = None) -> str | None:
    """The status of the newest build of the badge's project (or of that branch); None when it has none.

    At most two DynamoDB calls: the project by badge id (its item keeps its newest build's summary), and
    for a branch the branch's newest build.
    """
    project = store.get_project_by_badge(badge_id)
    if project is None:
        raise NotFound(BADGE_NOT_FOUND)
    return _status_of(project, branch)


def is_repository_provider(name: str) -> bool:
    """Whether a badge URL's first segment names a provider (``github``), not a badge id."""
    return name.lower() in REPOSITORY_PROVIDERS


def repository_build_status(provider: str, repository_name: str, branch: str | None = None) -> str | None:
    """As :func:`build_status`, of the one public project of ``owner/repo`` at ``provider`` (``github`` or
    ``bitbucket``, in any case); NotFound when there is none, or several."""
    stored_provider = REPOSITORY_PROVIDERS.get(provider.lower())
    if stored_provider is None:
        raise NotFound(f"Repository badges are for github and bitbucket repositories, not '{provider}'.")
    found = []
    if len(repository_name.encode("utf-8")) <= MAX_REPOSITORY_NAME_LENGTH:  # none is longer (nor a key may be)
        found = store.public_projects_of_repository(stored_provider, repository_name, limit=2)
    if not found:
        raise NotFound(f"No public project builds the {stored_provider} repository '{repository_name}'.")
    if len(found) > 1:
        raise NotFound(
            f"Several public projects build the {stored_provider} repository '{repository_name}': "
            "use the badge URL of one (its statusBadgeId)."
        )
    return _status_of(found[0], branch)


def _status_of(project: Project, branch: str | None) -> str | None:
    if branch is None:
        return None if project.last_build is None else project.last_build.status
    build = build_store.latest_build_for_branch(project.project_id, branch)
    return None if build is None else build.status


def with_badge_id(project: Project) -> Project:
    """The project with its badge id, giving it one first if it was made before badges."""
    if project.badge_id:
        return project
    given = store.give_badge_id(project, new_badge_id())
    if given is None:
        raise NotFound(PROJECT_NOT_FOUND)
    return given
