"""Webhook notifications: one request to a receiver's URL, with a short timeout; and the JSON POST the chat
channels (slack.py, teams.py) share, which names only the host of its URL."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from chalicelib import outbound
from chalicelib.outbound import shown

TIMEOUT_SECONDS = 10.0
MAX_ANSWER_BYTES = 65_536  # of a chat API's answer: enough for its {"ok": ..., "error": ...}


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


def host_of(url: str) -> str:
    """The URL as logs may show one whose path is its secret (a Slack or Teams webhook): scheme and host only."""
    try:
        target = urlsplit(url)
        port = f":{target.port}" if target.port else ""
    except ValueError:
        return "(an invalid URL)"
    return f"{target.scheme}://{target.hostname or ''}{port}"


def post_json(
    url: str, payload: object, headers: dict[str, str] | None = None, timeout: float = TIMEOUT_SECONDS
) -> bytes:
    """POST ``payload`` as JSON to a URL whose path or headers hold a secret; the answer's body (at most
    MAX_ANSWER_BYTES), or WebhookFailed, naming the host only, unless it is 2xx."""
    host = host_of(url)
    if urlsplit(url).scheme not in ("http", "https") or host.endswith("://"):
        raise WebhookFailed(f"A webhook needs an http(s) url, not {host!r}.")
    import requests  # loads where a request is sent: cold start

    from chalicelib.outbound import http

    sent_headers = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
    try:
        response = http.request("POST", url, data=json.dumps(payload).encode(), headers=sent_headers, timeout=timeout)
    except outbound.Refused as error:
        raise WebhookFailed(f"{host} was not called: {error}") from None
    except requests.Timeout:
        raise WebhookFailed(f"{host} did not answer within {timeout:g} s.") from None
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError):
        raise WebhookFailed(f"{host} cannot be called: its URL or a header is invalid.") from None
    except requests.RequestException:  # no details: they would describe the network the service runs in
        raise WebhookFailed(f"{host} is unreachable.") from None
    with response:
        if not 200 <= response.status_code < 300:
            raise WebhookFailed(f"{host} answered {response.status_code} {response.reason}.")
        return response.content[:MAX_ANSWER_BYTES]
