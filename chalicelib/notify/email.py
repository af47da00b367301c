"""E-mail through Amazon SES: one plain-text message per recipient, so no recipient sees another's address."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws

MAX_SUBJECT_CHARS = 200  # SES takes more; a subject line longer than this is unreadable anyway


class EmailFailed(Exception):
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
