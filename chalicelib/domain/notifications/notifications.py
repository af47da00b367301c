"""Notifications of finished builds and deployments: queued when one finishes, sent once by their handler.

The write that finishes a build or deployment happens once (a conditional write); the one writer that made it
queues a message naming it and the revision it finished at. The handler works out every notice first (the
account's users by their preferences, the build configuration's ``notifications:`` entries), then marks the
notifications sent on the item (a conditional write: a redelivered message finds them sent and sends nothing),
then sends each notice on its own: a failing recipient is logged, never stops the others, and never changes
the build. Delivery is so at most once: a handler that dies mid-way does not start over.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.members import Member
from chalicelib.core.projects import Project
from chalicelib.core.roles import Role
from chalicelib.core.status import Status
from chalicelib.domain.configuration.yamlconfig.notifications import MAX_NAME_SHOWN, refusal
from chalicelib.domain.forges.commit_statuses import MAX_BUILD_MESSAGES
from chalicelib.domain.notifications.notification_rules import (
    entry_fires,
    is_mine,
    status_changed,
    user_wants_build,
    user_wants_deployment,
)
from chalicelib.domain.shared import secrets
from chalicelib.domain.team.access import Right, has_right
from chalicelib.domain.team.auth import caller_of
from chalicelib.errors import Invalid
from chalicelib.notify import messages, notices_of
from chalicelib.notify import providers as notifiers
from chalicelib.notify.destinations import notification_destination
from chalicelib.notify.notifier import Entry, Notice, SendFailed
from chalicelib.notify.notifiers.email import email_notice
from chalicelib.shapes.time import timestamp
from chalicelib.store import builds as build_store
from chalicelib.store import deployments as deployment_store
from chalicelib.store import jobs as job_store
from chalicelib.store import members as member_store
from chalicelib.store import notifications as store
from chalicelib.store import projects as project_store
from chalicelib.store import roles as role_store

log = logging.getLogger(__name__)
MAX_NOTICES = 100  # per build or deployment: the handler's time is bounded
MIN_SECONDS_TO_SEND = 1.0
# A change of status is against the branch's newest older build that succeeded or failed (a cancel decides nothing),
# among its PREVIOUS_WINDOW newest older builds.
DECIDED = ("success", "failed")
PREVIOUS_WINDOW = 20


class _Unrevealed(Exception):
    """A notification entry's secure setting cannot be used for this build."""


def notify_build(project: Project, build: Build, revision: int, deadline: float) -> int:
    """Send the notifications of a build finished at ``revision`` once, by ``deadline`` (monotonic); returns how
    many went out."""
    if build.revision != revision or not Status(build.status).finished:
        return 0  # moved on (a re-run): a newer message speaks for it
    status = Status(build.status)
    older = build_store.list_builds(build.project_id, build.build_id, PREVIOUS_WINDOW, build.branch)
    previous = next((older_build.status for older_build in older if older_build.status in DECIDED), None)
    changed = status_changed(status, previous)
    subject, body = messages.build_subject(project, build), messages.build_body(project, build)
    audience = list(_audience(project))
    notices = [
        email_notice(member.email, subject, body)
        for member in audience
        if user_wants_build(member.notifications, status, changed, is_mine(member.email, build.commit))
    ]
    notices += _configured(project, build, status, changed, {member.email.strip().lower() for member in audience})
    if not notices or not store.claim_build_notifications(build):
        return 0
    return _deliver(notices, deadline, f"build {build.build_id}")


def notify_deployment(project_id: int, deployment_id: int, revision: int, deadline: float) -> int:
    """Send the e-mails of a finished deployment once, by ``deadline``; returns how many went out."""
    deployment = deployment_store.get_deployment(project_id, deployment_id)
    if deployment is None or deployment.revision != revision or not Status(deployment.status).finished:
        return 0
    project = project_store.get_project_by_id(deployment.account_id, project_id)
    build = build_store.get_build(project_id, deployment.build_id)
    if project is None or build is None:
        return 0
    status = Status(deployment.status)
    subject = messages.deployment_subject(project, build, deployment)
    body = messages.deployment_body(project, build, deployment)
    notices = [
        email_notice(member.email, subject, body)
        for member in _audience(project)
        if user_wants_deployment(member.notifications, status, is_mine(member.email, build.commit))
    ]
    if not notices or not store.claim_deployment_notifications(deployment):
        return 0
    return _deliver(notices, deadline, f"deployment {deployment_id}")


def _audience(project: Project) -> Iterator[Member]:
    """The account's users and collaborators who may see the project."""
    roles: dict[int, Role | None] = {}
    for member in member_store.list_members(project.account_id):
        if member.role_id not in roles:
            roles[member.role_id] = role_store.get_role(project.account_id, member.role_id)
        caller = caller_of(member, roles[member.role_id])
        if member.email and has_right(caller, project, Right.VIEW):
            yield member


def _configured(project: Project, build: Build, status: Status, changed: bool, members: set[str]) -> list[Notice]:
    """The notices of the build configuration's ``notifications:`` entries that fire (Email, Webhook, Slack and
    MicrosoftTeams); an entry that fires but cannot be sent says why among the build's messages.

    A pull request's author wrote its configuration (a fork's, anyone): its entries send e-mail only to
    ``members`` (the lower-cased addresses of those who may see the project) and nothing else."""
    pull_request = build.pull_request is not None
    notices: list[Notice] = []
    event: dict[str, Any] | None = None  # made once, and only if an entry needs it (artifact URLs cost calls)
    data: dict[str, Any] = {}  # the event's data, as templates see it
    for index, entry in enumerate(build.configuration.get("notifications") or []):
        if not isinstance(entry, dict) or not entry_fires(entry, status, changed):
            continue
        written = str(entry.get("provider", ""))[:MAX_NAME_SHOWN]
        refused = refusal(entry)  # a repository's entry, or one stored before such entries were refused when saved
        if refused is not None:
            _unsent(build, index, written, refused.reason, "warning")
            continue
        notifier = notifiers.named(written)
        if notifier is None:  # refusal() let through only the providers notify/providers.py declares
            continue
        if pull_request and not notifier.pull_requests:
            _unsent(build, index, written, "a pull request's build sends only e-mails to the account's users")
            continue
        if hidden := secrets.hidden_notification_destinations(entry):
            reason = (
                f"its {', '.join(hidden)} is secure beside other secure settings: write where it sends in plain text"
            )
            _unsent(build, index, written, reason, "warning")
            continue
        try:
            destination = notification_destination(entry)
            values = _revealed(secrets.project_owner(project), entry.get("settings") or {}, pull_request, destination)
        except _Unrevealed as error:
            _unsent(build, index, written, str(error).rstrip("."), "warning")
            continue
        if event is None:
            event = messages.build_event(project, build, job_store.get_jobs(build.job_ids))
            data = {**event["eventData"], "message": event["eventData"]["commitMessage"]}
        notices += notices_of(notifier, Entry(values, event, data, project, build, members if pull_request else None))
    return notices


def _unsent(build: Build, index: int, provider: str, reason: str, category: str = "information") -> None:
    """Say, among the build's messages (once: the same words are not added twice), why an entry was not sent."""
    text = f"Notification {index + 1} ({provider}) was not sent: {reason}."
    log.info("build %s: %s", build.build_id, text)
    note = {"category": category, "message": text, "created": timestamp(datetime.now(UTC))}
    build_store.add_message(build.project_id, build.build_id, note, MAX_BUILD_MESSAGES)


def _revealed(owner: secrets.Owner, value: Any, pull_request: bool, destination: str, key: str = "settings") -> Any:
    """The settings with every ``{secure: token}`` decrypted, as set for an entry sending to ``destination``;
    never for a pull request's build, whose configuration its author wrote (a secret sent to the URL they chose
    would be theirs)."""
    if isinstance(value, dict) and set(value) == {"secure"}:
        if pull_request:
            raise _Unrevealed("secure settings are not decrypted in pull request builds")
        try:
            return secrets.decrypt(owner, secrets.notification_field(key, destination), str(value["secure"]))
        except Invalid:
            raise _Unrevealed(
                f"its secure {str(key)[:MAX_NAME_SHOWN]} is not a secret this project set for this provider and "
                "receiver (a token works only in an entry that sends where it was set for: set the entry in the "
                "project's settings and copy the token they show)"
            ) from None
    if isinstance(value, dict):
        return {name: _revealed(owner, item, pull_request, destination, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_revealed(owner, item, pull_request, destination, key) for item in value]
    return value


def _deliver(notices: list[Notice], deadline: float, what: str) -> int:
    """Send each notice in turn while time is left; a failure is logged and the next one goes on."""
    if len(notices) > MAX_NOTICES:
        log.warning("%s: %s notifications, only the first %s are sent", what, len(notices), MAX_NOTICES)
    sent = 0
    for position, notice in enumerate(notices[:MAX_NOTICES]):
        left = deadline - time.monotonic()
        if left < MIN_SECONDS_TO_SEND:
            log.warning("%s: %s notifications not sent, the handler's time is up", what, len(notices) - position)
            break
        try:
            notice.send(left)
        except Exception as error:  # one recipient's failure is not the others'
            log.warning("%s: the %s notification to %s failed: %s", what, notice.channel, notice.shown, _reason(error))
        else:
            sent += 1
    return sent


def _reason(error: Exception) -> str:
    """Why a send failed, in words that carry no secret (not the request, its URL or its headers)."""
    if isinstance(error, SendFailed):
        return str(error)
    return type(error).__name__
