"""Slack and Microsoft Teams entries of a build's ``notifications:``: their text, and how each is sent.

The text is the entry's ``template`` (or the channel's default), Mustache over the webhook's eventData, as
AppVeyor renders its Slack template. The webhook URL and the token are credentials: they are used to send and
nowhere else; logs and errors name the webhook's host, or the Slack channel. Saved in a project's settings in
plain text, they are stored as secure values (``seal_secrets``), so responses show a token in their place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chalicelib import outbound
from chalicelib.config import forge_api_url
from chalicelib.domain.configuration.yamlconfig.notifications import CHAT_SETTINGS, UNSENT_CREDENTIALS, provider_sent
from chalicelib.domain.notifications.notification_rules import render
from chalicelib.domain.shared.secrets import is_token
from chalicelib.notify import slack, teams
from chalicelib.notify.webhook import TIMEOUT_SECONDS, host_of

Send = Callable[[float], None]  # given the seconds it may take
CREDENTIALS = ("incoming_webhook", "auth_token")


def slack_notice(values: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[str, Send]:
    """How a Slack entry (its secure settings revealed) is shown in logs, and how it is sent."""
    text = render(str(values.get("template") or slack.DEFAULT_TEMPLATE), data, escape=slack.escape)
    webhook, token, channel = (str(values.get(key) or "") for key in ("incoming_webhook", "auth_token", "channel"))
    if webhook:
        return host_of(webhook), lambda seconds: slack.post_to_webhook(webhook, text, _capped(seconds))
    # refusal() let through no entry without incoming_webhook that lacks auth_token or channel
    api_url = forge_api_url("slack") or slack.DEFAULT_API_URL  # CONVEYOR_SLACK_API_URL, if set

    def send(seconds: float) -> None:
        slack.post_to_channel(api_url, token, channel, text, _capped(seconds))

    return f"Slack channel {channel}", send


def teams_notice(values: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[str, Send]:
    """How a MicrosoftTeams entry (its secure settings revealed) is shown in logs, and how it is sent."""
    webhook = str(values.get("incoming_webhook") or "")  # refusal() let through no entry without one
    text = render(str(values.get("template") or teams.DEFAULT_TEMPLATE), data)
    outcome = "completed" if data.get("passed") else "failed"
    title = f"Build {data.get('projectName', '')} {data.get('buildVersion', '')} {outcome}"
    message = teams.card(title, text, bool(data.get("passed")), str(data.get("buildUrl") or ""))
    return host_of(webhook), lambda seconds: teams.post_card(webhook, message, _capped(seconds))


def _capped(seconds: float) -> float:
    """The seconds a request may take: what the handler has left, at most TIMEOUT_SECONDS."""
    return min(seconds, TIMEOUT_SECONDS)


def webhook_refusal(notification: Mapping[str, Any]) -> str | None:
    """Why a Slack or Teams entry's webhook URL, written in plain text, names a host Conveyor never connects to;
    None when it does not (or the URL is a stored token)."""
    if str(notification.get("provider", "")).strip().lower() not in CHAT_SETTINGS:
        return None
    value = (notification.get("settings") or {}).get("incoming_webhook")
    plain = value.get("secure") if isinstance(value, dict) and set(value) == {"secure"} else value
    if isinstance(plain, str) and not is_token(plain):
        return outbound.url_refusal(plain)
    return None


def seal_secrets(configuration: dict[str, Any]) -> None:
    """Make, in place, the plain ``incoming_webhook`` and ``auth_token`` of Slack and Teams entries secure values
    (the caller encrypts them), and the credentials of entries of providers Conveyor does not send (a
    GitHubPullRequest entry's auth_token is a GitHub token: never sent, it is still not kept in plain text)."""
    for notification in configuration.get("notifications") or []:
        keys: tuple[str, ...]
        if str(notification.get("provider", "")).strip().lower() in CHAT_SETTINGS:
            keys = CREDENTIALS
        elif not provider_sent(notification):
            keys = UNSENT_CREDENTIALS
        else:
            continue
        settings = notification.get("settings") or {}
        for key in keys:
            value = settings.get(key)
            if isinstance(value, str) and value:
                settings[key] = {"secure": value}
