"""Projects' schedules: the sparse by-schedule index of the projects due, the claim of a due run, and the claim
of its build's start.

A project with a schedule carries ``scheduled`` (the index's one partition) and ``schedule_due``, when it is due
next. The tick that claims a run first moves ``schedule_due`` on by a conditional write: of two ticks that read the
same due run, one wins and the other sends nothing. The queue handler that starts the run's build first moves
``schedule_started`` up to the run's due time by another: of two deliveries of its message, one starts the build.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from pynamodb.exceptions import UpdateError

from chalicelib.core.projects import Project
from chalicelib.store.models import ProjectModel
from chalicelib.store.transactions import is_condition_failure

SCHEDULED = "scheduled"  # the one partition of the by-schedule index: projects that have a schedule


def epoch(moment: datetime) -> int:
    return int(moment.astimezone(UTC).timestamp())


def from_epoch(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(int(seconds), UTC)


def due_projects(now: datetime) -> Iterator[tuple[int, str]]:
    """(account id, slug) of each project whose schedule is due by ``now``, the longest due first: a Query of the
    by-schedule index, read page by page as the caller goes on (the index lags the table a little)."""
    for model in ProjectModel.by_schedule.query(SCHEDULED, ProjectModel.schedule_due <= epoch(now)):
        yield int(model.account_id), model.slug


def schedule_actions(project: Project) -> list[Any]:
    """The writes that store ``project``'s schedule as it is; without one, the project leaves the index."""
    if project.schedule_crontab_expression is None or project.schedule_next_run is None:
        attributes = (ProjectModel.schedule_expression, ProjectModel.scheduled, ProjectModel.schedule_due)
        forgotten = [ProjectModel.schedule_error.remove(), ProjectModel.schedule_started.remove()]
        return [attribute.remove() for attribute in attributes] + forgotten
    return [
        ProjectModel.schedule_expression.set(project.schedule_crontab_expression),
        ProjectModel.scheduled.set(SCHEDULED),
        ProjectModel.schedule_due.set(epoch(project.schedule_next_run)),
        ProjectModel.schedule_error.remove(),
    ]


def claim_run(project: Project, next_run: datetime | None, error: str | None = None) -> bool:
    """Move the project's schedule from the run it was read due for to ``next_run`` (None: never again, and off the
    index, with ``error`` saying why), unless someone moved or changed it meanwhile: True for the one claim that
    wins, which sends the run's message."""
    if project.schedule_next_run is None:
        return False
    actions: list[Any]
    if next_run is None:
        actions = [ProjectModel.scheduled.remove(), ProjectModel.schedule_due.remove()]
        actions.append(ProjectModel.schedule_error.set(error) if error else ProjectModel.schedule_error.remove())
    else:
        actions = [ProjectModel.schedule_due.set(epoch(next_run))]
    return _update(project.account_id, project.slug, actions, _read_as(project, project.schedule_next_run))


def release_run(project: Project, next_run: datetime) -> bool:
    """Undo a claim whose message was not sent: the run is due again for the next tick, unless the schedule moved or
    changed since the claim."""
    if project.schedule_next_run is None:
        return False
    actions = [ProjectModel.schedule_due.set(epoch(project.schedule_next_run))]
    return _update(project.account_id, project.slug, actions, _read_as(project, next_run))


def claim_start(account_id: int, slug: str, project_id: int, run_at: int, unfinished: str) -> bool:
    """Take the start of the build of the run due at ``run_at`` (epoch seconds) of the project, if it still has a
    schedule and no start of this run or a later one was taken: True for the one delivery that starts it. The last
    run's error gives way to ``unfinished``, which stays should the start never finish (no delivery takes it again)."""
    not_started = ProjectModel.schedule_started.does_not_exist() | (ProjectModel.schedule_started < run_at)
    condition = (ProjectModel.project_id == project_id) & ProjectModel.schedule_expression.exists() & not_started
    actions = [ProjectModel.schedule_started.set(run_at), ProjectModel.schedule_error.set(unfinished)]
    return _update(account_id, slug, actions, condition)


def forget_error(account_id: int, slug: str, run_at: int) -> bool:
    """The build of the run due at ``run_at`` started: no error stays, unless a later run's start was taken since."""
    condition = (ProjectModel.schedule_started == run_at) & ProjectModel.schedule_expression.exists()
    return _update(account_id, slug, [ProjectModel.schedule_error.remove()], condition)


def note_error(account_id: int, slug: str, run_at: int, error: str) -> bool:
    """Keep why the build of the run due at ``run_at`` did not start, unless a later run's start was taken since
    (or the schedule was removed)."""
    condition = (ProjectModel.schedule_started == run_at) & ProjectModel.schedule_expression.exists()
    return _update(account_id, slug, [ProjectModel.schedule_error.set(error)], condition)


def _read_as(project: Project, due: datetime) -> Any:
    """The project's schedule is still the one read, due at ``due``."""
    return (ProjectModel.schedule_due == epoch(due)) & (
        ProjectModel.schedule_expression == project.schedule_crontab_expression
    )


def _update(account_id: int, slug: str, actions: list[Any], condition: Any) -> bool:
    try:
        ProjectModel(account_id, slug).update(actions=actions, condition=condition)
    except UpdateError as error:
        if is_condition_failure(error):  # moved, changed or deleted meanwhile
            return False
        raise
    return True
