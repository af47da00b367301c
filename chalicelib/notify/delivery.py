"""What the notifiers that make HTTP requests share: one request to a receiver's URL, with a short timeout (a
webhook's); and the JSON POST the chat channels (notifiers/slack.py, notifiers/teams.py) send, which names only the
host of its URL."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from chalicelib import outbound
from chalicelib.notify.notifier import SendFailed
from chalicelib.outbound import shown

TIMEOUT_SECONDS = 10.0
MAX_ANSWER_BYTES = 65_536  # of a chat API's answer: enough for its {"ok": ..., "error": ...}


class WebhookFailed(SendFailed):
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


def host_of(url: str) -> str:
    """The URL as logs may show one whose path is its secret (a Slack or Teams webhook): scheme and host only."""
    return shown(url, path=False)


def post_json(
    url: str, payload: object, headers: dict[str, str] | None = None, timeout: float = TIMEOUT_SECONDS
) -> bytes:
    """POST ``payload`` as JSON to a URL whose path or headers hold a secret; the answer's body (at most
    MAX_ANSWER_BYTES), or WebhookFailed, naming the host only, unless it is 2xx."""
    host = host_of(url)
    if urlsplit(url).scheme not in ("http", "https") or host.endswith("://"):
        raise WebhookFailed(f"A webhook needs an http(s) url, not {host!r}.")
    from chalicelib.outbound import http  # requests loads where a request is sent: cold start

    sent_headers = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
    body = json.dumps(payload).encode()
    try:
        _, answer = http.exchange(
            "POST", url, data=body, headers=sent_headers, timeout=timeout, named=host, max_answer_bytes=MAX_ANSWER_BYTES
        )
    except outbound.Failed as error:
        raise WebhookFailed(str(error)) from None
    return answer


def capped(seconds: float) -> float:
    """The seconds a request may take: what the handler has left, at most TIMEOUT_SECONDS."""
    return min(seconds, TIMEOUT_SECONDS)
