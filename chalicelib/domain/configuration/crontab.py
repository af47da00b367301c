"""A project's schedule: AppVeyor's ``scheduleCrontabExpression``, read as NCrontab reads it, evaluated in UTC.

NCrontab takes five fields (minute, hour, day of month, month, day of week with Sunday = 0), each a number, ``*``,
a range ``a-b``, a step ``/n`` or a list ``a,b``; months and days of the week may be named (``jan``, ``mon``).
A day must match both day fields (``0 0 13 * 5``: each Friday the 13th), where Unix cron takes either: croniter's
``day_or=False``. croniter's own extensions (``L``, ``W``, ``#``, ``?``, ``H``, ``@daily``, a seconds field) are
refused, so an expression means here what it means on AppVeyor.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

from chalicelib.core.projects import Project
from chalicelib.domain.shared.validation import invalid

FIELD = "scheduleCrontabExpression"
_FIELDS = ("minute", "hour", "day of month", "month", "day of week")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NAMES = {  # the fields that take names, and the number of each
    3: {name: number for number, name in enumerate(_MONTHS, 1)},
    4: {name: number for number, name in enumerate(_DAYS)},  # Sunday = 0
}
_NAME = re.compile(r"(?<![a-z])[a-z]{3}(?![a-z])", re.IGNORECASE)
_PLAIN = re.compile(r"[0-9*,/-]+")
_RANGE = re.compile(r"(\d+)-(\d+)")
_VALUE = re.compile(r"(?<![/\d])\d+")  # a number that is a value, not a step
_DAY_OF_WEEK = 4


def valid_expression(text: str) -> str:
    """The expression, its fields one space apart, if it is one NCrontab reads and some minute matches it; else a
    400 naming the field."""
    fields = text.split()
    if len(fields) != len(_FIELDS):
        raise invalid(
            FIELD,
            f"{FIELD} must have five fields, minute hour day-of-month month day-of-week (in UTC, Sunday = 0), "
            f"e.g. '0 3 * * 1-5'; '{text.strip()}' has {len(fields)}.",
        )
    for position, field in enumerate(fields):
        _check_field(position, field)
    expression = " ".join(fields)
    from croniter import CroniterBadDateError, CroniterError, croniter  # loads only where a schedule is read

    try:
        croniter(expression, datetime.now(UTC), day_or=False).get_next(datetime)
    except CroniterBadDateError as error:
        raise invalid(
            FIELD, f"{FIELD} '{expression}' never comes due: no date matches it (a day must match both day fields)."
        ) from error
    except (CroniterError, ValueError) as error:
        raise invalid(FIELD, f"{FIELD} '{expression}' is not a schedule: {error}.") from error
    return expression


def _check_field(position: int, field: str) -> None:
    """A field of NCrontab's syntax; a range written backwards is refused, as NCrontab would read ``5-1`` as ``1-5``
    and croniter as ``5`` to ``1`` round the end."""
    names = _NAMES.get(position, {})
    numeric = _NAME.sub(lambda name: str(names.get(name.group().lower(), name.group())), field)
    if not _PLAIN.fullmatch(numeric):
        named = " or three-letter names" if names else ""
        raise invalid(
            FIELD,
            f"{FIELD}: '{field}' is not a {_FIELDS[position]}: use numbers{named}, *, ranges a-b, steps /n and "
            "lists a,b.",
        )
    for start, end in _RANGE.findall(numeric):
        if int(start) > int(end):
            raise invalid(FIELD, f"{FIELD}: the range in '{field}' runs backwards; write it from {end} to {start}.")
    if position == _DAY_OF_WEEK and any(int(day) > 6 for day in _VALUE.findall(numeric)):
        raise invalid(FIELD, f"{FIELD}: '{field}' is not a day of week: days run 0 to 6, Sunday = 0 (7 is no day).")


def next_run(expression: str, after: datetime) -> datetime | None:
    """The first minute after ``after`` that ``expression`` matches, in UTC; None when none ever will (or an
    expression stored once no longer reads)."""
    from croniter import CroniterError, croniter

    try:
        following: datetime = croniter(expression, after.astimezone(UTC), day_or=False).get_next(datetime)
    except (CroniterError, ValueError):
        return None
    return following


def with_schedule(project: Project, sent: str | None, now: datetime) -> Project:
    """The project with the schedule a settings change sent: None keeps the stored one, an empty string removes it;
    a new expression is checked, and is first due at its first minute after ``now``."""
    if sent is None:
        return project
    expression = valid_expression(sent) if sent.strip() else None
    ran_out = expression is not None and project.schedule_next_run is None  # no run was left: set again, it runs
    if expression == project.schedule_crontab_expression and not ran_out:
        return project  # unchanged: its next run stays as the scheduler moved it
    return replace(
        project,
        schedule_crontab_expression=expression,
        schedule_next_run=None if expression is None else next_run(expression, now),
        schedule_last_error=None,
    )
