"""E-mail through Amazon SES: one plain-text message per recipient, so no recipient sees another's address. The
Email entries of ``notifications:`` (their subject and message templates), and the e-mails users' preferences ask
for."""

from __future__ import annotations

import logging
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.notify import messages
from chalicelib.notify.notifier import Entry, Notice, SendFailed
from chalicelib.notify.templates import render

log = logging.getLogger(__name__)

MAX_SUBJECT_CHARS = 200  # SES takes more; a subject line longer than this is unreadable anyway


class EmailFailed(SendFailed):
    """SES refused or could not take the message; the text says why, with no secret (no body, no address)."""


def send_email(sender: str, recipient: str, subject: str, body: str) -> None:
    """Send one message; EmailFailed when SES does not take it (an unverified sender, a rejected address)."""
    try:
        _send(sender, recipient, subject, body)
    except ClientError as error:
        details = error.response.get("Error", {})
        raise EmailFailed(f"{details.get('Code', 'error')}: {details.get('Message', '')}") from error
    except BotoCoreError as error:
        raise EmailFailed(type(error).__name__) from error


def _send(sender: str, recipient: str, subject: str, body: str) -> None:
    aws.client("ses").send_email(
        Source=sender,
        Destination={"ToAddresses": [recipient]},
        Message={
            "Subject": {"Data": " ".join(subject.split())[:MAX_SUBJECT_CHARS], "Charset": "UTF-8"},
            "Body": {"Text": {"Data": body, "Charset": "UTF-8"}},
        },
    )


def notices(entry: Entry) -> list[Notice]:
    """An Email entry's e-mails, its templates rendered over the event's data; with ``entry.only``, to those of its
    addresses only (a pull request's: members')."""
    values, project, build = entry.values, entry.project, entry.build
    subject = (
        render(str(values["subject"]), entry.data) if values.get("subject") else messages.build_subject(project, build)
    )
    body = render(str(values["message"]), entry.data) if values.get("message") else messages.build_body(project, build)
    addresses = _addresses(values)
    allowed = [address for address in addresses if entry.only is None or address.lower() in entry.only]
    if len(allowed) < len(addresses):
        log.info(
            "build %s: %s addresses of a pull request's Email entry skipped: not members of the account",
            build.build_id,
            len(addresses) - len(allowed),
        )
    return [email_notice(address, subject, body) for address in allowed]


def _addresses(values: Any) -> list[str]:
    """The ``to`` (or ``toAddress``, ``recipients``) of an Email entry: a list, or text separated by , or ;."""
    found: list[str] = []
    for key in ("to", "toAddress", "recipients"):
        given = values.get(key)
        for item in given if isinstance(given, list) else [given]:
            if isinstance(item, str):
                found += [part.strip() for part in item.replace(";", ",").split(",") if part.strip()]
    return list(dict.fromkeys(found))


def email_notice(address: str, subject: str, body: str) -> Notice:
    """One e-mail, from the service's notification sender."""
    return Notice(
        "e-mail", address, lambda _seconds: send_email(settings().notification_sender, address, subject, body)
    )
