"""Slack and Microsoft Teams entries of a build's ``notifications:`` as a project's settings keep them (how each is
sent is notify/notifiers/slack.py's and teams.py's).

The webhook URL and the token are credentials: they are used to send and nowhere else; logs and errors name the
webhook's host, or the Slack channel. Saved in a project's settings in plain text, they are stored as secure values
(``seal_secrets``), so responses show a token in their place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib import outbound
from chalicelib.core.configuration import Configuration
from chalicelib.domain.configuration.yamlconfig.notifications import CHAT_SETTINGS, UNSENT_CREDENTIALS, provider_sent
from chalicelib.domain.shared.secrets import is_token

CREDENTIALS = ("incoming_webhook", "auth_token")


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


def seal_secrets(configuration: Configuration) -> None:
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
