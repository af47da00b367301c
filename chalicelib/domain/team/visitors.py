"""Visitors: requests without a key on the reads a public project allows everyone (its builds, history, logs and
artifacts, as on AppVeyor), resolved to a caller of the project's account that may only view public projects.

What a visitor names is checked here, before any view runs: a project, or a build job, of a public project, in the
account the URL's prefix names if it names one. Anything else, a private project or one that does not exist, is
the 401 a request without a key always got, so an answer never tells which. The access rules check again
(domain/team/access.py): a visitor may View a public project and do nothing else.
"""

from __future__ import annotations

from chalicelib.core.projects import Project
from chalicelib.domain.team.auth import Caller, visitor
from chalicelib.errors import Unauthorized
from chalicelib.store import accounts as account_store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store


def of_project(account_name: str, slug: str, prefix_account: str | None) -> Caller:
    """The visitor of ``/projects/{account_name}/{slug}/...``: Unauthorized unless that project is public."""
    account = account_store.get_account_by_name(account_name)
    project = None if account is None else project_store.get_project(account.account_id, slug)
    return _visitor_of(project, prefix_account)


def of_job(job_id: str, prefix_account: str | None) -> Caller:
    """The visitor of ``/buildjobs/{job_id}/...``: Unauthorized unless it is a build job of a public project (a
    deployment's job, whose log speaks of its environment, never is)."""
    job = job_store.get_job(job_id)
    project = None
    if job is not None and job.deployment_id is None:
        project = project_store.get_project_by_id(job.account_id, job.project_id)
    return _visitor_of(project, prefix_account)


def _visitor_of(project: Project | None, prefix_account: str | None) -> Caller:
    if project is None or project.is_private:
        raise Unauthorized()
    if prefix_account is not None and prefix_account.lower() != project.account_name.lower():
        raise Unauthorized()
    return visitor(project.account_id, project.account_name)
