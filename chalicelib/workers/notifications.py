"""The notifications queue: a finished build or deployment, by its ids, whose notifications are sent once; a
commit status to post; a scheduled run whose build to start (domain/triggers/schedules.py)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from chalice.app import SQSEvent

from chalicelib.core.messages import Announce, ReportStatus, StartScheduledBuild, notification_message
from chalicelib.domain import announcements
from chalicelib.domain.forges import commit_statuses
from chalicelib.domain.notifications import notifications
from chalicelib.domain.shared import outbox
from chalicelib.domain.triggers import schedules

log = logging.getLogger(__name__)
HANDLER_SECONDS = 50.0  # the sends' bound without a Lambda context; the function's timeout is 60 s
MARGIN_SECONDS = 5.0  # kept back from the function's remaining time, to finish and return


def _deadline(event: Any) -> float:
    context = getattr(event, "context", None)
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    seconds = HANDLER_SECONDS
    if callable(remaining):
        seconds = min(seconds, remaining() / 1000 - MARGIN_SECONDS)
    return time.monotonic() + seconds


def send_notifications(event: SQSEvent) -> None:
    """E-mails and webhooks for each finished build or deployment named (a redelivery finds them sent), commit
    statuses to post, a finished build's inline deployments to start (a redelivery finds them started), and
    scheduled builds to start (a redelivery finds the run's start taken)."""
    deadline = _deadline(event)
    for record in event:
        try:
            message = notification_message(json.loads(record.body))
        except ValueError:  # NotAMessage, or not JSON
            log.error("a notifications queue message names no build or deployment: %.200s", record.body)
            continue
        if isinstance(message, ReportStatus):
            commit_statuses.report(message)
        elif isinstance(message, StartScheduledBuild):
            schedules.start_scheduled_build(message)
        else:
            if message.build_id is not None:
                announcements.announce_build(
                    message.project_id, message.build_id, message.revision, deadline, message.project_key
                )
            elif message.deployment_id is not None:
                notifications.notify_deployment(message.project_id, message.deployment_id, message.revision, deadline)
            outbox.handled(message)


def abandon_notifications(event: SQSEvent) -> None:
    """A message that failed every delivery: its notifications are not sent, which is said where it shows (a
    scheduled run's on its project, as scheduleLastError)."""
    for record in event:
        try:
            message = notification_message(json.loads(record.body))
        except ValueError:
            message = None
        if isinstance(message, StartScheduledBuild):
            schedules.abandon_scheduled_build(message)
            continue
        if isinstance(message, Announce):  # given up on: the sweeper does not send it again
            outbox.handled(message)
        log.error("notifications not sent, their message failed every delivery: %.200s", record.body)
