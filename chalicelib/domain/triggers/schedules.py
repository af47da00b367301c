"""Scheduled builds: each minute, every project whose schedule is due gets one build of its default branch.

The minute's tick only claims due runs and queues one message per run claimed; the notifications queue's handler
starts each build, in parallel and each with its own time, so a slow repository delays no other project's build.
A claim is a conditional write that moves the project's next run on from the one it was due for
(store/schedules.py), so ticks that overlap (a tick delivered twice, a slow tick and the next one, two stacks on one
table) send one message. Its start is claimed too, by the run's due time, so a message delivered twice starts one
build. One account claims at most ACCOUNT_RUNS_PER_TICK runs per tick: the rest stay due for the next, and its many
schedules never hold back another account's. Runs missed while nothing ticked are not made up: one build, then the
next run after now. A build that cannot start (the repository unreachable, its appveyor.yml in error) is not tried
again before the next run: why is logged and kept on the project (settings' ``scheduleLastError``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from chalicelib.core.messages import StartScheduledBuild
from chalicelib.core.projects import Project
from chalicelib.domain.builds import builds
from chalicelib.domain.configuration.crontab import next_run
from chalicelib.errors import ConveyorError
from chalicelib.shapes.time import timestamp
from chalicelib.store import projects as project_store
from chalicelib.store import queues
from chalicelib.store import schedules as store

log = logging.getLogger(__name__)
ACCOUNT_RUNS_PER_TICK = 30  # an account's runs claimed per tick; more wait a minute, behind no one else's
SEND_BATCH = 10  # claimed runs whose messages go in one SQS call (its limit)


@dataclass
class Tick:
    """What one tick did: the runs it claimed and queued, the runs it could not (no minute matches their schedule
    again, or their message did not go), the due runs it left for the next tick because their account had claimed
    its share (counted by account id), and whether it stopped for want of time (the projects still due are the next
    tick's)."""

    queued: list[StartScheduledBuild] = field(default_factory=list)
    failed: int = 0
    deferred: Counter[int] = field(default_factory=Counter)
    out_of_time: bool = False


@dataclass
class _Claimed:
    project: Project
    next_run: datetime
    message: StartScheduledBuild


def claim_due_runs(now: datetime, has_time: Callable[[], bool], per_account: int = ACCOUNT_RUNS_PER_TICK) -> Tick:
    """Claim the run of every project whose schedule is due by ``now``, at most ``per_account`` per account, while
    ``has_time()`` allows another, and queue one message per run claimed; no repository is read."""
    tick = Tick()
    taken: Counter[int] = Counter()
    claimed: list[_Claimed] = []
    for account_id, slug in store.due_projects(now):
        if taken[account_id] >= per_account:
            tick.deferred[account_id] += 1
            continue
        if not has_time():
            tick.out_of_time = True
            break
        taken[account_id] += 1
        project = project_store.get_project(account_id, slug)
        if project is None or project.schedule_next_run is None or project.schedule_next_run > now:
            continue  # deleted, unscheduled or moved on since the index (which lags the table) was read
        run = _claim(project, now, tick)
        if run is not None:
            claimed.append(run)
        if len(claimed) == SEND_BATCH:
            _send(claimed, tick)
            claimed = []
    _send(claimed, tick)
    return tick


def _claim(project: Project, now: datetime, tick: Tick) -> _Claimed | None:
    """Claim the project's due run, unless another tick claimed it first."""
    expression, due = project.schedule_crontab_expression, project.schedule_next_run
    if expression is None or due is None:
        return None
    upcoming = next_run(expression, now)
    if upcoming is None:  # no minute will match again: the project leaves the index, saying why
        reason = f"The schedule '{expression}' has no run after {timestamp(now)}; set it again to build on schedule."
        if store.claim_run(project, None, reason):
            log.warning("project %s/%s: %s", project.account_name, project.slug, reason)
            tick.failed += 1
        return None
    if not store.claim_run(project, upcoming):
        return None
    message = StartScheduledBuild(project.account_id, project.project_id, project.slug, store.epoch(due))
    return _Claimed(project, upcoming, message)


def _send(claimed: list[_Claimed], tick: Tick) -> None:
    """Queue the claimed runs' messages; runs whose message did not go are due again for the next tick (if one went
    after all, its start is claimed once: the next tick's message for the same run starts nothing)."""
    if not claimed:
        return
    try:
        queues.send([run.message for run in claimed])
    except queues.SendFailed as error:
        log.warning("scheduled builds: %s runs not queued (%s); due again next tick", len(claimed), error)
        for run in claimed:
            store.release_run(run.project, run.next_run)
        tick.failed += len(claimed)
        return
    tick.queued += [run.message for run in claimed]


def start_scheduled_build(run: StartScheduledBuild) -> int | None:
    """Start the build of a claimed run, unless this run's (or a later run's) start was taken already or the
    schedule was removed: the build's id, or None. A build that does not start leaves why on the project."""
    project = project_store.get_project(run.account_id, run.slug)
    if project is None or project.project_id != run.project_id:
        return None  # deleted since the claim
    # the start is taken before the repository is read: should the handler stop on the way (a fetch past its time),
    # no delivery takes it again, so the project says so until the build has started
    stopped = _error_text(run, "the service stopped while starting it.")
    if not store.claim_start(run.account_id, run.slug, run.project_id, run.run_at, stopped):
        log.info("project %s/%s: the run of %s was started already", project.account_name, project.slug, run.run_at)
        return None
    try:
        build, _ = builds.start_scheduled_build(project)
    except ConveyorError as error:
        reason = error.message
    except Exception:  # the start is taken: a delivery again would start nothing, so why is kept on the project
        log.exception("project %s/%s: the scheduled build did not start", project.account_name, project.slug)
        reason = "the service failed to start it (the error is logged)."
    else:
        store.forget_error(run.account_id, run.slug, run.run_at)
        log.info("project %s/%s: scheduled build %s", project.account_name, project.slug, build.version)
        return build.build_id
    _note_error(run, reason)
    return None


def abandon_scheduled_build(run: StartScheduledBuild) -> None:
    """A run whose message failed every delivery: its build did not start, which the project says, unless it did."""
    abandoned = _error_text(run, "its message failed every delivery.")
    if store.claim_start(run.account_id, run.slug, run.project_id, run.run_at, abandoned):
        log.warning("project %s/%s: %s", run.account_id, run.slug, abandoned)


def _error_text(run: StartScheduledBuild, reason: str) -> str:
    """What the project says of a run whose build did not start."""
    due = datetime.fromtimestamp(run.run_at, UTC)
    return f"The build scheduled for {timestamp(due)} did not start: {reason}"


def _note_error(run: StartScheduledBuild, reason: str) -> None:
    message = _error_text(run, reason)
    log.warning("project %s/%s: %s", run.account_id, run.slug, message)
    store.note_error(run.account_id, run.slug, run.run_at, message)
