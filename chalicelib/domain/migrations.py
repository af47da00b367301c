"""Changes to stored data that the code alone cannot make on read: run by ``conveyor migrate`` after an upgrade
(and by the local stack as it starts). Each is idempotent: run twice, the second changes nothing."""

from __future__ import annotations

import logging

from chalicelib.domain.repository_credentials import migrated
from chalicelib.errors import Conflict, NotFound
from chalicelib.store import deployments as deployment_store
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
    }


def move_repository_credentials() -> int:
    """Projects whose repository name carries ``user:password@`` (stored before such names were refused): the
    credentials move into the credentials fields, the password encrypted; the name keeps its URL only."""
    moved = 0
    for project in store.scan_projects():
        after = migrated(project)
        if after is None:
            continue
        try:
            store.save_settings(project, after)
        except (Conflict, NotFound):  # changed or deleted meanwhile: the next run looks again
            log.warning("project %s changed while its credentials were moved; run the migration again", project.slug)
            continue
        moved += 1
    return moved
