"""Webhook notifications: one request to a receiver's URL, with a short timeout."""

from __future__ import annotations

from urllib.parse import urlsplit

import requests

from chalicelib import outbound

TIMEOUT_SECONDS = 10.0


class WebhookFailed(Exception):
    """The receiver could not be reached or did not answer 2xx; the message names no secret."""


def shown(url: str) -> str:
    """The URL as logs may show it: no query (it may carry a token) and no credentials."""
    try:
        target = urlsplit(url)
        port = f":{target.port}" if target.port else ""
    except ValueError:
        return "(an invalid URL)"
    return f"{target.scheme}://{target.hostname or ''}{port}{target.path}"


def send_webhook(
    url: str, body: bytes, method: str = "POST", headers: dict[str, str] | None = None, timeout: float = TIMEOUT_SECONDS
) -> int:
    """Send ``body`` (JSON unless the headers say otherwise; a GET sends none); returns the answer's status,
    WebhookFailed unless it is 2xx."""
    if urlsplit(url).scheme not in ("http", "https") or shown(url).endswith("://"):
        raise WebhookFailed(f"A webhook needs an http(s) url, not {shown(url)!r}.")
    method = method.upper() if method.upper() in ("GET", "POST", "PUT") else "POST"
    sent_headers = {"Content-Type": "application/json", **(headers or {})}
    try:
        response = outbound.request(
            method, url, data=None if method == "GET" else body, headers=sent_headers, timeout=timeout
        )
    except outbound.Refused as error:
        raise WebhookFailed(f"The webhook {shown(url)} was not sent: {error}") from None
    except requests.Timeout:
        raise WebhookFailed(f"The webhook {shown(url)} did not answer within {timeout:g} s.") from None
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError):
        raise WebhookFailed(f"The webhook {shown(url)} cannot be sent: its URL or a header is invalid.") from None
    except requests.RequestException:  # no details: they would describe the network the service runs in
        raise WebhookFailed(f"The webhook {shown(url)} is unreachable.") from None
    with response:
        if not 200 <= response.status_code < 300:
            raise WebhookFailed(f"The webhook {shown(url)} answered {response.status_code} {response.reason}.")
        return response.status_code
