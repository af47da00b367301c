"""Projects: adding one for a repository, deleting it. Finding one as the caller may see it is
domain/projects/project_lookup.py's."""

from __future__ import annotations

import re
import secrets
from dataclasses import replace
from datetime import UTC, datetime

from chalicelib.core.projects import Project
from chalicelib.core.repository_names import repository_title
from chalicelib.domain.configuration.yamlconfig import DEFAULT_VERSION_FORMAT, default_configuration
from chalicelib.domain.forges.repositories import valid_repository
from chalicelib.domain.forges.repository_credentials import NO_CREDENTIALS, CredentialsChange, with_credentials
from chalicelib.domain.projects.badges import new_badge_id
from chalicelib.domain.projects.project_lookup import find_project
from chalicelib.domain.shared.validation import MAX_NAME_LENGTH
from chalicelib.domain.team.access import Right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Conflict
from chalicelib.store import blobs, build_states, counters
from chalicelib.store import deployments as deployment_store
from chalicelib.store import job_slots as job_slot_store
from chalicelib.store import projects as store

MAX_SLUG_SUFFIX = 1000


def add_project(
    caller: Caller,
    provider: str,
    repository_name: str,
    credentials: CredentialsChange = NO_CREDENTIALS,
    is_private: bool = True,
) -> Project:
    """A new project of the caller's account for a repository (and its clone credentials), with default settings:
    private unless ``is_private`` says otherwise."""
    repository_name, scm = valid_repository(provider, repository_name)
    name = repository_title(repository_name)[:MAX_NAME_LENGTH]  # within what a settings update accepts
    project = Project(
        account_id=caller.account_id,
        account_name=caller.account_name,
        project_id=counters.next_value(counters.PROJECTS),
        slug="",
        name=name,
        repository_type=provider,
        repository_scm=scm,
        repository_name=repository_name,
        webhook_id=secrets.token_hex(10),
        version_format=DEFAULT_VERSION_FORMAT,
        configuration=default_configuration(),
        created=datetime.now(UTC),
        badge_id=new_badge_id(),
        is_private=is_private,
    )
    project = with_credentials(project, credentials)
    base = slugify(name)
    for suffix in range(MAX_SLUG_SUFFIX):
        slug = base if suffix == 0 else f"{base}-{suffix}"
        if store.slug_taken(caller.account_id, slug):
            continue
        candidate = replace(project, slug=slug)
        if store.add_project(candidate):
            return candidate
    raise Conflict(f"Too many projects are named '{base}' in this account.")


def slugify(name: str) -> str:
    """A URL-safe, lower-case form of a project name."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:60].strip("-") or "project"


def delete_project(caller: Caller, account_name: str, slug: str) -> None:
    """Remove the project and everything stored under it."""
    project = find_project(caller, account_name, slug, Right.DELETE)
    store.delete_project(project)
    build_states.delete_project_builds(project.project_id)
    deployment_store.delete_project_deployments(project.project_id)
    job_slot_store.forget(project.project_id)
    for prefix in blobs.project_prefixes(project.account_id, project.project_id):
        blobs.delete_prefix(prefix)


def delete_build_cache(caller: Caller, account_name: str, slug: str) -> None:
    """Remove every cached folder of every job of the project (204 even when there is none)."""
    project = find_project(caller, account_name, slug, Right.UPDATE)
    blobs.delete_prefix(blobs.project_cache_prefix(project.account_id, project.project_id))
