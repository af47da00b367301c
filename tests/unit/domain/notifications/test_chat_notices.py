"""Slack and Teams entries as a project's settings keep them: their credentials sealed, their webhooks' hosts
checked. No IO."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.notifications.chat_notices import seal_secrets, webhook_refusal


def test_plain_chat_credentials_and_an_unsent_providers_token_are_made_secure_values() -> None:
    configuration: dict[str, Any] = {
        "notifications": [
            {"provider": "Slack", "settings": {"incoming_webhook": "https://hooks.slack.com/x", "channel": "#ci"}},
            {"provider": "GitHubPullRequest", "settings": {"auth_token": "ghp_secret"}},
            {"provider": "Webhook", "settings": {"url": "https://hooks.example.com/"}},
        ]
    }

    seal_secrets(configuration)

    slack, github, hook = (entry["settings"] for entry in configuration["notifications"])
    assert slack == {"incoming_webhook": {"secure": "https://hooks.slack.com/x"}, "channel": "#ci"}
    assert github == {"auth_token": {"secure": "ghp_secret"}}
    assert hook == {"url": "https://hooks.example.com/"}  # a webhook's own url is where it sends, not a secret


def test_a_teams_webhook_on_a_private_address_is_refused_and_another_providers_is_not_asked() -> None:
    private = {"provider": "MicrosoftTeams", "settings": {"incoming_webhook": "http://169.254.169.254/hook"}}

    assert webhook_refusal(private) is not None
    assert webhook_refusal({"provider": "Webhook", "settings": {"url": "http://169.254.169.254/hook"}}) is None
