"""Who is told of a finished build or deployment: pure rules over preferences and configuration entries.

Users' preferences (``successfulBuildNotification`` and the like) take ``all``, ``mine`` (only builds with the
user's commits: the commit's author or committer has the user's e-mail) and ``none``/``off``; any other value
counts as ``all``, the default. A cancelled build or deployment notifies nobody: someone stopped it on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.core.members import Notifications
from chalicelib.core.status import Status

NEVER = frozenset({"none", "off", "never", "false", "no"})
MINE = "mine"
_TRIGGERS = ("onBuildSuccess", "onBuildFailure", "onBuildStatusChanged")


def wants(preference: str, mine: bool) -> bool:
    """Whether a preference value asks for this notification."""
    value = (preference or "all").strip().lower()
    if value in NEVER:
        return False
    return mine if value == MINE else True


def user_wants_build(preferences: Notifications, status: Status, changed: bool, mine: bool) -> bool:
    """Whether a user's preferences ask for an e-mail about a build that ended in ``status``."""
    if status not in (Status.SUCCESS, Status.FAILED):
        return False
    if preferences.notify_when_build_status_changed_only and not changed:
        return False
    preference = preferences.successful_build if status is Status.SUCCESS else preferences.failed_build
    return wants(preference, mine)


def user_wants_deployment(preferences: Notifications, status: Status, mine: bool) -> bool:
    """Whether a user's preferences ask for an e-mail about a deployment that ended in ``status``."""
    if status not in (Status.SUCCESS, Status.FAILED):
        return False
    preference = preferences.successful_deployment if status is Status.SUCCESS else preferences.failed_deployment
    return wants(preference, mine)


def is_mine(email: str, commit: Mapping[str, Any]) -> bool:
    """Whether the commit is the user's: its author or committer has the user's e-mail."""
    own = email.strip().lower()
    return bool(own) and own in {
        str(commit.get(key) or "").strip().lower() for key in ("authorEmail", "committerEmail")
    }


def entry_fires(entry: Mapping[str, Any], status: Status, changed: bool) -> bool:
    """Whether a ``notifications:`` entry fires for a build that ended in ``status``.

    An entry with no trigger set fires on all three, as AppVeyor reads one (the stored form cannot tell an
    unset trigger from a false one, so three false triggers mean none was given)."""
    if status not in (Status.SUCCESS, Status.FAILED):
        return False
    success, failure, on_change = (bool(entry.get(trigger)) for trigger in _TRIGGERS)
    if not (success or failure or on_change):
        success = failure = on_change = True
    return (status is Status.SUCCESS and success) or (status is Status.FAILED and failure) or (changed and on_change)


def status_changed(status: Status, previous: str | None) -> bool:
    """Whether a build's result differs from its branch's previous result (a first build counts as a change)."""
    return previous is None or previous != str(status)
