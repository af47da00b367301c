"""Slack: a message posted to an incoming webhook, or with a token to a channel through chat.postMessage.

The text is Slack's mrkdwn (``<url|label>`` links, ``_italic_``); values put into it are escaped with ``escape``,
as Slack asks of ``&``, ``<`` and ``>``. Neither the webhook's URL (its path is its key) nor the token is ever
part of an error: WebhookFailed names the host only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from chalicelib.config import forge_api_url
from chalicelib.notify.delivery import TIMEOUT_SECONDS, WebhookFailed, capped, host_of, post_json
from chalicelib.notify.notifier import Entry, Notice, Send
from chalicelib.notify.templates import render

DEFAULT_API_URL = "https://slack.com/api"  # CONVEYOR_SLACK_API_URL replaces it (tests, a proxy)
MAX_TEXT_CHARS = 4000  # Slack cuts longer messages into several; a template gone wrong stays one message
# AppVeyor's default Slack message, with the branch, and an emoji where AppVeyor colours an attachment.
DEFAULT_TEMPLATE = (
    "{{#passed}}:white_check_mark:{{/passed}}{{#failed}}:x:{{/failed}} "
    "<{{buildUrl}}|Build {{projectName}} {{buildVersion}} {{status}}>\n"
    "Branch {{branch}}, commit {{commitId}} by {{commitAuthor}} on {{commitDate}}:\n"
    "_{{commitMessage}}_"
)
_ERROR_CODE = re.compile(r"[a-z_]{1,60}")


def escape(value: str) -> str:
    """A value as Slack's text must carry it: ``&``, ``<`` and ``>`` as entities."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def message(text: str) -> dict[str, str]:
    """The JSON an incoming webhook takes."""
    return {"text": text[:MAX_TEXT_CHARS]}


def post_to_webhook(url: str, text: str, timeout: float = TIMEOUT_SECONDS) -> None:
    """Post ``text`` to an incoming webhook; WebhookFailed unless Slack answers 2xx."""
    post_json(url, message(text), timeout=timeout)


def post_to_channel(api_url: str, token: str, channel: str, text: str, timeout: float = TIMEOUT_SECONDS) -> None:
    """Post ``text`` to ``channel`` with chat.postMessage; WebhookFailed unless Slack answers ``"ok": true``
    (it answers 200 with ``{"ok": false, "error": ...}`` to a bad token or an unknown channel)."""
    url = f"{api_url.rstrip('/')}/chat.postMessage"
    answer = post_json(url, {"channel": channel, **message(text)}, {"Authorization": f"Bearer {token}"}, timeout)
    try:
        result = json.loads(answer)
    except ValueError:
        raise WebhookFailed("Slack's chat.postMessage did not answer JSON.") from None
    if not isinstance(result, dict) or result.get("ok") is not True:
        error = result.get("error") if isinstance(result, dict) else None
        code = error if isinstance(error, str) and _ERROR_CODE.fullmatch(error) else "an unknown error"
        raise WebhookFailed(f"Slack's chat.postMessage refused the message: {code}.")


def notices(entry: Entry) -> list[Notice]:
    """A Slack entry's message."""
    return [Notice("Slack", *notice(entry.values, entry.data))]


def notice(values: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[str, Send]:
    """How a Slack entry (its secure settings revealed) is shown in logs, and how it is sent."""
    text = render(str(values.get("template") or DEFAULT_TEMPLATE), data, escape=escape)
    webhook, token, channel = (str(values.get(key) or "") for key in ("incoming_webhook", "auth_token", "channel"))
    if webhook:
        return host_of(webhook), lambda seconds: post_to_webhook(webhook, text, capped(seconds))
    # refusal() let through no entry without incoming_webhook that lacks auth_token or channel
    api_url = forge_api_url("slack") or DEFAULT_API_URL  # CONVEYOR_SLACK_API_URL, if set

    def send(seconds: float) -> None:
        post_to_channel(api_url, token, channel, text, capped(seconds))

    return f"Slack channel {channel}", send
