"""Webhook notifications' addresses: refused before anything is sent, and shown without their secret path."""

from __future__ import annotations

import pytest

from chalicelib.notify.delivery import WebhookFailed, host_of, post_json, send_webhook


def test_a_webhook_url_is_shown_by_its_host_alone() -> None:
    assert host_of("https://hooks.slack.com/services/T000/B000/s3cr3t") == "https://hooks.slack.com"


@pytest.mark.parametrize("url", ["ftp://files.example.com/hook", "file:///etc/passwd", "https://"])
def test_what_is_not_an_http_url_is_refused_without_a_request(url: str) -> None:
    with pytest.raises(WebhookFailed, match="needs an http"):
        send_webhook(url, b"{}")
    with pytest.raises(WebhookFailed, match="needs an http"):
        post_json(url, {"text": "hi"})
