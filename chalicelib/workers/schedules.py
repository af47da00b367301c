"""The schedule's tick: once a minute, the runs of the projects whose schedule is due are claimed and queued
(domain/triggers/schedules.py); the notifications queue's handler starts their builds."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from chalice.app import CloudWatchEvent

from chalicelib.domain.triggers import schedules

log = logging.getLogger(__name__)
CLAIM_SECONDS = 45.0  # runs are claimed for at most this long, so a tick is done before the next one begins
FINISH_SECONDS = 10.0  # of the function's time, kept to queue the runs claimed last


def start_scheduled_builds(event: CloudWatchEvent | None = None, now: datetime | None = None) -> None:
    """Every minute: claim the run of each project whose schedule is due by ``now`` (the clock's, or a test's) and
    queue its build's start; those left when its time is up, or over their account's share, are the next tick's."""
    ends = time.monotonic() + CLAIM_SECONDS
    context = getattr(event, "context", None)
    if context is not None:  # a function given less time than a tick's (a shorter timeout) keeps to it
        ends = min(ends, time.monotonic() + context.get_remaining_time_in_millis() / 1000 - FINISH_SECONDS)
    tick = schedules.claim_due_runs(now or datetime.now(UTC), lambda: time.monotonic() < ends)
    if tick.queued or tick.failed:
        log.info("scheduled builds: %s queued to start, %s not", len(tick.queued), tick.failed)
    if tick.deferred:
        waiting = tick.deferred.total()
        log.warning("scheduled builds: %s due runs wait for the next tick: their account had its share", waiting)
    if tick.out_of_time:
        log.warning("scheduled builds: the tick's time ran out; the projects still due are claimed on the next tick")
