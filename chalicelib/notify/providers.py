"""Every notification provider the service sends, and the settings naming where each sends: the one list to add a
notifier to (beside its module in notify/notifiers/, its test and docs/api.md), as deploy/providers.py is for
deployment providers. The notifications handler sends an entry through the module its provider names here
(notify/__init__.py); reading these declarations loads none of them.

A notifications entry's secure settings are bound to its provider and to these settings as written, so that a token
set for one receiver decrypts for no other. As deployment destinations are, the settings are read over every
provider, not only the entry's own: a url binds the secrets beside it whichever provider is named.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Notifier:
    """One provider a notifications entry may name: its name and the settings naming where it sends."""

    name: str  # AppVeyor's spelling; entries match it without regard to case
    module: str  # chalicelib.notify.notifiers.<module> sends it: a notify.notifier.Sender
    destinations: tuple[str, ...]  # its settings naming the receiver (a URL, a channel, addresses)
    # a pull request's build sends it (its author wrote the entry: e-mail goes to the account's members only)
    pull_requests: bool = False


NOTIFIERS = (
    Notifier("Email", "email", destinations=("to", "toAddress", "recipients"), pull_requests=True),
    Notifier("Webhook", "webhook", destinations=("url",)),
    # a token posts to the channel; a webhook's URL is itself the receiver (and a secret: stored secure)
    Notifier("Slack", "slack", destinations=("incoming_webhook", "channel")),
    Notifier("MicrosoftTeams", "teams", destinations=("incoming_webhook",)),
)


def names() -> tuple[str, ...]:
    """Every provider a notifications entry may name to be sent, in the order the docs list them."""
    return tuple(notifier.name for notifier in NOTIFIERS)


def destination_settings() -> tuple[str, ...]:
    """Every provider's settings naming where it sends (lower case), each once: what its secrets are bound to."""
    return tuple(dict.fromkeys(name.lower() for notifier in NOTIFIERS for name in notifier.destinations))


def named(provider: str) -> Notifier | None:
    """The notifier an entry's provider names, in any case and with spaces around; None for one the service does not
    send."""
    wanted = provider.strip().lower()
    return next((notifier for notifier in NOTIFIERS if notifier.name.lower() == wanted), None)
