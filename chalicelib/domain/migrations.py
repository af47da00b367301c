"""Changes to stored data that the code alone cannot make on read: run by ``conveyor migrate`` after an upgrade
(and by the local stack as it starts). Each is idempotent: run twice, the second changes nothing."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from chalicelib.core.environments import Environment
from chalicelib.core.projects import Project
from chalicelib.domain.deployments.environments import rebound_settings
from chalicelib.domain.forges.repository_credentials import migrated
from chalicelib.domain.notifications.notification_secrets import rebound_environment, rebound_project
from chalicelib.errors import Conflict, NotFound
from chalicelib.store import deployments as deployment_store
from chalicelib.store import environments as environment_store
from chalicelib.store import job_forms
from chalicelib.store import projects as store

log = logging.getLogger(__name__)


def migrate() -> dict[str, int]:
    """Every migration, in order; how many items each changed."""
    return {
        "repository credentials": move_repository_credentials(),
        "last build summaries": store.rewrite_old_build_summaries(),
        "job counts and artifacts": job_forms.rewrite_old_counts_and_artifacts(),
        "deployments' environments": deployment_store.rewrite_old_environments(),
        "environment secrets' binding": bind_environment_secrets(),
        "notification secrets' binding": bind_notification_secrets(),
    }


def move_repository_credentials() -> int:
    """Projects whose repository name carries ``user:password@`` (stored before such names were refused): the
    credentials move into the credentials fields, the password encrypted; the name keeps its URL only."""
    return _rewrite_projects(migrated, "its credentials were moved")


def bind_environment_secrets() -> int:
    """Environments whose secure settings and variables were encrypted before they were bound to where the
    environment delivers (its provider and destination settings, an Agent's key; or its provider alone, as they
    were bound before the second review of issue 34): re-encrypted so bound; how many environments changed."""
    return _rewrite_environments(rebound_settings, "its secrets were bound")


def bind_notification_secrets() -> int:
    """Projects and environments whose notifications' secure settings were encrypted before they were bound to
    where their entry sends (its provider and receiver; issue 34, third review): re-encrypted so bound; how many
    projects and environments changed."""
    what = "its notification secrets were bound"
    return _rewrite_projects(rebound_project, what) + _rewrite_environments(rebound_environment, what)


def _rewrite_projects(rewrite: Callable[[Project], Project | None], what: str) -> int:
    """Save each project's settings as ``rewrite`` gives them (None: nothing to change); how many changed. A project
    changed or deleted meanwhile is left for the next run."""
    changed = 0
    for project in store.scan_projects():
        after = rewrite(project)
        if after is None:
            continue
        try:
            store.save_settings(project, after)
        except (Conflict, NotFound):
            log.warning("project %s changed while %s; run the migration again", project.slug, what)
            continue
        changed += 1
    return changed


def _rewrite_environments(rewrite: Callable[[Environment], dict[str, Any] | None], what: str) -> int:
    """Rewrite each environment's settings as ``rewrite`` gives them (None: nothing to change); how many changed."""
    changed = 0
    for environment in environment_store.scan_environments():
        settings = rewrite(environment)
        if settings is None:
            continue
        if environment_store.rewrite_settings(environment, settings):
            changed += 1
        else:  # changed or deleted meanwhile: the next run looks again
            log.warning("environment %s changed while %s; run the migration again", environment, what)
    return changed
