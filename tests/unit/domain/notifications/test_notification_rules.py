"""Who is told of a finished build or deployment: every preference and trigger against every outcome."""

from __future__ import annotations

import pytest

from chalicelib.core.members import Notifications
from chalicelib.core.status import Status
from chalicelib.domain.notifications.notification_rules import (
    entry_fires,
    is_mine,
    status_changed,
    user_wants_build,
    user_wants_deployment,
    wants,
)
from chalicelib.notify.notifiers import slack
from chalicelib.notify.templates import render

S, F, C = Status.SUCCESS, Status.FAILED, Status.CANCELLED


@pytest.mark.parametrize(
    ("preference", "mine", "expected"),
    [
        ("all", False, True),
        ("all", True, True),
        ("", False, True),  # unset: the default, all
        ("none", True, False),
        ("off", True, False),
        ("None", True, False),
        ("mine", True, True),
        ("mine", False, False),
        ("something-else", False, True),
    ],
)
def test_a_preference_asks_for_all_mine_or_nothing(preference: str, mine: bool, expected: bool) -> None:
    assert wants(preference, mine) is expected


def test_user_build_preferences_pick_by_result_and_ignore_cancelled_builds() -> None:
    failures_only = Notifications(successful_build="none", failed_build="all")
    assert [user_wants_build(failures_only, status, True, False) for status in (S, F, C)] == [False, True, False]
    everything = Notifications()
    assert [user_wants_build(everything, status, False, False) for status in (S, F, C)] == [True, True, False]


def test_changed_only_users_hear_of_changes_only() -> None:
    changed_only = Notifications(notify_when_build_status_changed_only=True)
    assert user_wants_build(changed_only, S, changed=True, mine=False)
    assert not user_wants_build(changed_only, S, changed=False, mine=False)
    assert not user_wants_build(changed_only, F, changed=False, mine=False)


def test_deployment_preferences_are_their_own() -> None:
    preferences = Notifications(
        successful_build="none", failed_build="none", successful_deployment="all", failed_deployment="mine"
    )
    assert user_wants_deployment(preferences, S, mine=False)
    assert not user_wants_deployment(preferences, F, mine=False)
    assert user_wants_deployment(preferences, F, mine=True)
    assert not user_wants_deployment(preferences, C, mine=True)


def test_a_commit_is_mine_by_its_author_or_committer_email() -> None:
    commit = {"authorEmail": "Ada@Example.com", "committerEmail": "bot@example.com"}
    assert is_mine("ada@example.com", commit) and is_mine("BOT@example.com", commit)
    assert not is_mine("eve@example.com", commit) and not is_mine("", {"authorEmail": ""})


def entry(success: bool = False, failure: bool = False, changed: bool = False) -> dict[str, object]:
    return {"provider": "Email", "onBuildSuccess": success, "onBuildFailure": failure, "onBuildStatusChanged": changed}


@pytest.mark.parametrize(
    ("triggers", "status", "changed", "expected"),
    [
        (entry(success=True), S, False, True),
        (entry(success=True), F, True, False),
        (entry(failure=True), F, False, True),
        (entry(failure=True), S, True, False),
        (entry(changed=True), S, True, True),
        (entry(changed=True), F, True, True),
        (entry(changed=True), S, False, False),
        (entry(), S, False, True),  # no trigger given: all three
        (entry(), F, False, True),
        (entry(), C, True, False),  # a cancelled build notifies nobody
    ],
)
def test_configuration_entries_fire_by_their_triggers(
    triggers: dict[str, object], status: Status, changed: bool, expected: bool
) -> None:
    assert entry_fires(triggers, status, changed) is expected


def test_a_first_build_counts_as_a_change() -> None:
    assert status_changed(S, None) and status_changed(F, "success") and not status_changed(S, "success")


def test_templates_fill_values_and_sections() -> None:
    template = "{{#passed}}OK{{/passed}}{{^passed}}KO{{/passed}} {{projectName}} {{&buildVersion}} {{missing}}."
    assert render(template, {"passed": True, "projectName": "app", "buildVersion": "1.0.3"}) == "OK app 1.0.3 ."
    assert render(template, {"passed": False, "projectName": "app", "buildVersion": "1.0.3"}) == "KO app 1.0.3 ."


def test_an_escaping_render_escapes_plain_values_and_keeps_raw_ones() -> None:
    values = {"message": "Fix <b> & <i>"}
    assert render("{{message}} | {{{message}}} | {{& message}}", values, slack.escape) == (
        "Fix &lt;b&gt; &amp; &lt;i&gt; | Fix <b> & <i> | Fix <b> & <i>"
    )
