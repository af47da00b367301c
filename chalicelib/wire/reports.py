"""Shapes of what a job reported through the Build Worker API: its messages and its tests.

GET /api/buildjobs/{jobId}/messages lists build messages and compilation messages together; ``type`` tells them
apart ("Message" or "Compilation"), and a compilation message carries where it points as well. GET
/api/buildjobs/{jobId}/tests lists tests with the Build Worker API's own field names (the last four PascalCase,
as AppVeyor's are), and Conveyor's ``sentFromOutside``: a test a key sent into the job from outside the build is
listed beside the build's own test of that name, never in its place.
"""

from __future__ import annotations

from typing import Any

from chalicelib.core.reports import COMPILATION, Report, sent_from_outside
from chalicelib.shapes.time import timestamp

MESSAGE_TYPES = {"message": "Message", "compilation": "Compilation"}
TEST_FIELDS = (
    "testName",
    "testFramework",
    "fileName",
    "outcome",
    "durationMilliseconds",
    "ErrorMessage",
    "ErrorStackTrace",
    "StdOut",
    "StdErr",
)


def message_json(report: Report) -> dict[str, Any]:
    """A build message or a compilation message; its category is information, warning or error."""
    body = report.body
    shape: dict[str, Any] = {
        "type": MESSAGE_TYPES[report.kind],
        "message": str(body.get("message") or ""),
        "category": str(body.get("category") or "information"),
        "details": _text(body.get("details")),
        "created": timestamp(report.created),
    }
    if report.kind == COMPILATION:
        shape.update({name: _text(body.get(name)) for name in ("fileName", "projectName", "projectFileName")})
        shape.update({name: _number(body.get(name)) for name in ("line", "column")})
    return shape


def reported_test_json(report: Report) -> dict[str, Any]:
    """A test as it was last reported: an outcome of None, Running, Passed, Failed, Ignored, Skipped, ..."""
    body = report.body
    shape: dict[str, Any] = {name: _text(body.get(name)) for name in TEST_FIELDS}
    shape["outcome"] = shape["outcome"] or "None"
    shape["durationMilliseconds"] = _number(body.get("durationMilliseconds"))
    shape["created"] = timestamp(report.created)
    shape["sentFromOutside"] = sent_from_outside(report)  # Conveyor's: a key sent it, not the build
    return shape


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> int | None:
    """A line, a column or a duration: reporters send numbers and numeric strings alike; anything else is null."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return None
