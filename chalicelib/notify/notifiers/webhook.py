"""Webhook entries of ``notifications:``: one request to the receiver's URL, AppVeyor's event payload as JSON or the
entry's own body template, with its method and headers."""

from __future__ import annotations

import json
from functools import partial

from chalicelib.notify.delivery import capped, send_webhook
from chalicelib.notify.notifier import Entry, Notice
from chalicelib.notify.templates import render
from chalicelib.outbound import shown


def notices(entry: Entry) -> list[Notice]:
    """A Webhook entry's request."""
    values = entry.values
    url = str(values.get("url") or "")
    given = values.get("headers")
    headers = {str(name): str(value) for name, value in given.items()} if isinstance(given, dict) else {}
    if values.get("authorization"):
        headers["Authorization"] = str(values["authorization"])
    if values.get("content_type"):  # AppVeyor's key for a body that is not JSON; a header of that name wins
        headers = {"Content-Type": str(values["content_type"]), **headers}
    template = values.get("body")
    body = render(str(template), entry.event["eventData"]) if template else json.dumps(entry.event)
    method = str(values.get("method") or "POST")
    send = partial(_send, url, body.encode(), method, headers)
    return [Notice("webhook", shown(url), send)]


def _send(url: str, body: bytes, method: str, headers: dict[str, str], seconds: float) -> None:
    send_webhook(url, body, method, headers, timeout=capped(seconds))
