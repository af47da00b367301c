"""Microsoft Teams: an Adaptive Card posted to a channel's webhook URL.

Teams takes the same message from a Workflows webhook ("Post to a channel when a webhook request is received",
the successor of Office 365 connectors) and from a connector's incoming webhook: ``{"type": "message",
"attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "content": <card>}]}``. The card is
a title coloured by the result, the text, and a button to the build when its link is absolute. AppVeyor has no
Teams provider: this one is Conveyor's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.notify.delivery import TIMEOUT_SECONDS, capped, host_of, post_json
from chalicelib.notify.notifier import Entry, Notice, Send
from chalicelib.notify.templates import render

CARD_VERSION = "1.4"  # what every Teams client renders
MAX_TEXT_CHARS = 4000  # a card is at most 28 KB; a template gone wrong still fits
DEFAULT_TEMPLATE = "Branch {{branch}}, commit {{commitId}} by {{commitAuthor}} on {{commitDate}}:\n\n{{commitMessage}}"


def card(title: str, text: str, passed: bool, link: str) -> dict[str, Any]:
    """The message Teams shows: ``title`` in green or red, ``text`` below, and a button to ``link``."""
    content: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "body": [
            {
                "type": "TextBlock",
                "text": title,
                "weight": "Bolder",
                "size": "Medium",
                "color": "Good" if passed else "Attention",
                "wrap": True,
            },
            {"type": "TextBlock", "text": text[:MAX_TEXT_CHARS], "wrap": True},
        ],
    }
    if link.startswith(("https://", "http://")):  # a path alone (no CONVEYOR_BASE_URL) opens nothing
        content["actions"] = [{"type": "Action.OpenUrl", "title": "Open the build", "url": link}]
    attachment = {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None, "content": content}
    return {"type": "message", "attachments": [attachment]}


def post_card(url: str, message: dict[str, Any], timeout: float = TIMEOUT_SECONDS) -> None:
    """Post a ``card`` to the channel's webhook; WebhookFailed unless Teams answers 2xx."""
    post_json(url, message, timeout=timeout)


def notices(entry: Entry) -> list[Notice]:
    """A MicrosoftTeams entry's card."""
    return [Notice("Microsoft Teams", *notice(entry.values, entry.data))]


def notice(values: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[str, Send]:
    """How a MicrosoftTeams entry (its secure settings revealed) is shown in logs, and how it is sent."""
    webhook = str(values.get("incoming_webhook") or "")  # refusal() let through no entry without one
    text = render(str(values.get("template") or DEFAULT_TEMPLATE), data)
    outcome = "completed" if data.get("passed") else "failed"
    title = f"Build {data.get('projectName', '')} {data.get('buildVersion', '')} {outcome}"
    message = card(title, text, bool(data.get("passed")), str(data.get("buildUrl") or ""))
    return host_of(webhook), lambda seconds: post_card(webhook, message, capped(seconds))
