"""Status badges: a project found by its badge id (one Query of the by-badge index), and an id given late; public
projects found by their repository (one Query of the by-public-repository index)."""

from __future__ import annotations

from dataclasses import replace

from pynamodb.exceptions import UpdateError

from chalicelib.core.projects import Project
from chalicelib.store.models import ProjectModel
from chalicelib.store.projects import get_project, project_from_model, public_repository_key
from chalicelib.store.transactions import is_condition_failure


def get_project_by_badge(badge_id: str) -> Project | None:
    """The project whose status badge has that id, or None."""
    if not badge_id:  # DynamoDB refuses an empty key rather than finding nothing
        return None
    for model in ProjectModel.by_badge.query(badge_id, limit=1):
        return project_from_model(model)
    return None


def public_projects_of_repository(provider: str, repository_name: str, limit: int) -> list[Project]:
    """At most ``limit`` public projects of that repository (``owner/repo`` of ``provider``, in any case)."""
    key = public_repository_key(provider, repository_name)
    return [project_from_model(model) for model in ProjectModel.by_public_repository.query(key, limit=limit)]


def give_badge_id(project: Project, badge_id: str) -> Project | None:
    """The project with ``badge_id`` as its badge id, unless it has one already: then with that one (an id
    once shown never changes). None when the project is gone."""
    try:
        ProjectModel(project.account_id, project.slug).update(
            actions=[ProjectModel.badge_id.set(badge_id)],
            condition=ProjectModel.slug.exists() & ProjectModel.badge_id.does_not_exist(),
        )
    except UpdateError as error:
        if not is_condition_failure(error):
            raise
        return get_project(project.account_id, project.slug)  # another request gave it one first, or it is gone
    return replace(project, badge_id=badge_id)
