"""E-mail through Amazon SES: one plain-text message per recipient, so no recipient sees another's address."""

from __future__ import annotations

from chalicelib import aws

MAX_SUBJECT_CHARS = 200  # SES takes more; a subject line longer than this is unreadable anyway


def send_email(sender: str, recipient: str, subject: str, body: str) -> None:
    """Send one message; SES's errors (an unverified sender, a rejected address) propagate."""
    aws.client("ses").send_email(
        Source=sender,
        Destination={"ToAddresses": [recipient]},
        Message={
            "Subject": {"Data": " ".join(subject.split())[:MAX_SUBJECT_CHARS], "Charset": "UTF-8"},
            "Body": {"Text": {"Data": body, "Charset": "UTF-8"}},
        },
    )
