"""A notifier: what sends one provider of a build configuration's ``notifications:`` entries (docs/api.md). The one
interface every notifier implements, one module each in notify/notifiers/ (email, webhook, Slack, Teams), declared in
notify/providers.py, which names its module.

A notifier's module is a ``Sender``: it turns an entry that fires, its secure settings revealed, into the notices to
send. Sending is later, each notice on its own, given the seconds it may take; a notice that fails raises
SendFailed, whose words carry no secret (not the request, its URL or its headers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from chalicelib.core.builds import Build
    from chalicelib.core.projects import Project

Send = Callable[[float], None]  # given the seconds it may take


class SendFailed(Exception):
    """A notice was not taken by its receiver; str() says why, in words that carry no secret."""


@dataclass(frozen=True)
class Notice:
    """One message to send: an e-mail to one address, or one webhook or chat request."""

    channel: str
    shown: str  # the recipient as logs may show it (never a secret)
    send: Send


@dataclass(frozen=True)
class Entry:
    """One ``notifications:`` entry that fires for a finished build, with what its notices are made of."""

    values: Mapping[str, Any]  # its settings, secure ones decrypted
    event: dict[str, Any]  # the build's event, in AppVeyor's webhook payload's shape
    data: dict[str, Any]  # the event's data, as templates see it
    project: Project
    build: Build
    only: set[str] | None = None  # a pull request's build: e-mail only these (lower-cased) addresses, members'


@runtime_checkable
class Sender(Protocol):
    """What a notifier's module is: the notices of one entry of its provider."""

    def notices(self, entry: Entry) -> list[Notice]:
        """The notices ``entry`` sends."""
        ...
