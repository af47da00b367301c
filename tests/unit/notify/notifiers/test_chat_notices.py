"""Slack and Teams entries of ``notifications:``: logs name where they go, never the webhook's secret path. No IO
(nothing is sent: the send functions are not called)."""

from __future__ import annotations

from chalicelib.notify.notifiers.slack import notice as slack_notice
from chalicelib.notify.notifiers.teams import notice as teams_notice

WEBHOOK = "https://hooks.slack.com/services/T000/B000/s3cr3t"


def test_a_slack_webhook_is_named_by_its_host_and_a_channel_post_by_its_channel() -> None:
    shown, _ = slack_notice({"incoming_webhook": WEBHOOK}, {"projectName": "app"})
    by_token, _ = slack_notice({"auth_token": "xoxb-1", "channel": "#builds"}, {"projectName": "app"})

    assert shown == "https://hooks.slack.com"
    assert by_token == "Slack channel #builds"


def test_a_teams_entry_is_named_by_the_host_of_its_webhook() -> None:
    data = {"projectName": "app", "buildVersion": "1.0.3", "passed": False}

    shown, _ = teams_notice({"incoming_webhook": "https://example.webhook.office.com/webhookb2/s3cr3t"}, data)

    assert shown == "https://example.webhook.office.com"
