"""Webhook notifications: one request to a receiver's URL, with a short timeout."""

from __future__ import annotations

from urllib.parse import urlsplit

from chalicelib import outbound
from chalicelib.outbound import shown

TIMEOUT_SECONDS = 10.0


class WebhookFailed(Exception):
    """The receiver could not be reached or did not answer 2xx; the message names no secret."""


def send_webhook(
    url: str, body: bytes, method: str = "POST", headers: dict[str, str] | None = None, timeout: float = TIMEOUT_SECONDS
) -> int:
    """Send ``body`` (JSON unless the headers say otherwise; a GET sends none); returns the answer's status,
    WebhookFailed unless it is 2xx."""
    if urlsplit(url).scheme not in ("http", "https") or shown(url).endswith("://"):
        raise WebhookFailed(f"A webhook needs an http(s) url, not {shown(url)!r}.")
    method = method.upper() if method.upper() in ("GET", "POST", "PUT") else "POST"
    sent_headers = {"Content-Type": "application/json", **(headers or {})}
    from chalicelib.outbound import http  # requests loads where a webhook is sent: cold start

    try:
        return http.send(method, url, data=None if method == "GET" else body, headers=sent_headers, timeout=timeout)
    except outbound.Failed as error:
        raise WebhookFailed(f"The webhook {error}") from None
