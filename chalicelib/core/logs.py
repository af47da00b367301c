"""A job's log as it is asked for and answered: a byte range, and the reply (inline text, a part, or a redirect)."""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class ByteRange(FieldsRepr):
    """Bytes ``first`` to ``last`` of a log (inclusive; ``last`` None: to its end), or with ``first`` None,
    its last ``last`` bytes: what ``Range: bytes=first-last`` or ``bytes=-last`` asks for."""

    first: int | None
    last: int | None

    def within(self, total: int) -> tuple[int, int] | None:
        """The bytes ``[start, end)`` of a log of ``total`` bytes this range asks for; None: none exists."""
        if self.first is None:
            return (max(total - (self.last or 0), 0), total) if self.last and total else None
        if self.first >= total:
            return None
        return self.first, total if self.last is None else min(self.last + 1, total)


@dataclass(frozen=True, repr=False)
class LogPart(FieldsRepr):
    """Which bytes of the log a reply to a range holds: ``[start, end)`` of ``total`` (so far, while it runs).
    ``start == end``: the log has none of the bytes asked for."""

    start: int
    end: int
    total: int


@dataclass(frozen=True, repr=False)
class LogReply(FieldsRepr):
    """What the API sends for a job's log: the text inline (the whole log, its tail, or a part), or a redirect."""

    text: bytes | None  # the log to send inline (text/plain), or None
    redirect_url: str | None  # a short-lived presigned GET URL to send as a 302, or None
    part: LogPart | None = None  # which bytes ``text`` holds, when a range was asked for
