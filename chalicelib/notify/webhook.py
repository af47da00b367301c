"""Webhook notifications: one request to a receiver's URL, with a short timeout."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from urllib.parse import urlsplit

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
    try:
        request = urllib.request.Request(url, data=None if method == "GET" else body, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("User-Agent", "Conveyor")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        raise WebhookFailed(f"The webhook {shown(url)} answered {error.code} {error.reason}.") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        if isinstance(reason, TimeoutError):
            raise WebhookFailed(f"The webhook {shown(url)} did not answer within {timeout:g} s.") from None
        raise WebhookFailed(f"The webhook {shown(url)} could not be reached ({type(reason).__name__}).") from None
    except ValueError:  # an invalid URL, or a header the settings gave that cannot be sent (a newline in it)
        raise WebhookFailed(f"The webhook {shown(url)} cannot be sent: its URL or a header is invalid.") from None
