"""Notifications: one module per notifier in notifiers/, chosen by the provider an entry names (notify/providers.py
declares each), behind one interface (notifier.py).

Modules are imported when first used, so a function that reads the notifiers' declarations loads none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from chalicelib.notify.notifier import Entry, Notice, Sender
    from chalicelib.notify.providers import Notifier


def notices_of(notifier: Notifier, entry: Entry) -> list[Notice]:
    """The notices ``entry``, an entry of ``notifier``'s provider that fires, sends."""
    sender = cast("Sender", importlib.import_module(f"chalicelib.notify.notifiers.{notifier.module}"))
    return sender.notices(entry)
