"""Timestamps as AppVeyor writes them: UTC, seven fractional digits, ``+00:00``."""

from __future__ import annotations

from datetime import UTC, datetime


def timestamp(moment: datetime) -> str:
    """``2014-08-14T05:41:49.1061830+00:00`` (Python keeps microseconds, so the seventh digit is 0)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0+00:00"


def optional_timestamps(**moments: datetime | None) -> dict[str, str]:
    """The given timestamps that are set, by field name; unset ones are left out of the shape."""
    return {name: timestamp(moment) for name, moment in moments.items() if moment is not None}
