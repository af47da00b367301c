"""What a warm function reuses for a few seconds instead of reading it again: who a key is, an account's roles.

Every request starts by resolving its API key to a user, a membership and a role: three reads that would be
most of a read endpoint's cost. A warm Lambda function (or the local stack) keeps what it resolved for
``REUSE_SECONDS``. A change made through this function (a user removed, a role changed) forgets everything at
once; a change made through another warm function is seen here within ``REUSE_SECONDS``. Failures are never
kept: a key that did not resolve is looked up again on its next use.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

REUSE_SECONDS = 10.0
MAX_ENTRIES = 1024  # per cache; a full cache starts again empty rather than tracking use

V = TypeVar("V")
_caches: list[WarmCache[object]] = []


class WarmCache(Generic[V]):
    """Values by key, each reused for ``REUSE_SECONDS`` after it was loaded."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[float, V]] = {}
        self._generation = 0  # moves on at each clear, so a load that overlapped one is not kept
        self._lock = threading.Lock()
        _caches.append(self)  # type: ignore[arg-type]

    def get(self, key: Hashable, load: Callable[[], V]) -> V:
        """The value kept for ``key`` if still fresh, else ``load()`` (kept unless it raises)."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            generation = self._generation
        if entry is not None and now - entry[0] < REUSE_SECONDS:
            return entry[1]
        value = load()
        with self._lock:
            if generation == self._generation:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[key] = (now, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._generation += 1


def forget_everything() -> None:
    """After a change to who may do what: keys, members and roles are read afresh on their next use."""
    for cache in _caches:
        cache.clear()
