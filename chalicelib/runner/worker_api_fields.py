"""What the Build Worker API's clients send, read as the service takes it: messages and tests, fields in any casing."""

from __future__ import annotations

from typing import Any

OUTCOMES = (
    "None",
    "Running",
    "Passed",
    "Failed",
    "Ignored",
    "Skipped",
    "Inconclusive",
    "NotFound",
    "Cancelled",
    "NotRunnable",
)
_OUTCOMES = {outcome.lower(): outcome for outcome in OUTCOMES}
_CATEGORIES = {"information": "information", "info": "information", "warning": "warning", "error": "error"}


class BadRequest(Exception):
    """What a client sent cannot be used; the message says why."""


def json_object(body: Any) -> dict[str, Any]:
    """The body, which must be a JSON object."""
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def json_array(body: Any) -> list[Any]:
    """The body, which must be a JSON array."""
    if not isinstance(body, list):
        raise BadRequest("The body must be a JSON array.")
    return body


def _field(fields: dict[str, Any], *names: str) -> Any:
    """A field by any of its names, in any case (clients send ``StdOut``, ``stdOut`` and ``stdout``)."""
    lowered = {str(key).lower(): value for key, value in fields.items()}
    for name in names:
        if lowered.get(name.lower()) is not None:
            return lowered[name.lower()]
    return None


def text_field(fields: dict[str, Any], *names: str) -> str | None:
    """A field by any of its names, in any case, as text; None when absent."""
    value = _field(fields, *names)
    return None if value is None else str(value)


def reported_message(fields: dict[str, Any], kind: str) -> dict[str, Any]:
    """A message (or a compilation message) as the service stores it."""
    text = text_field(fields, "message")
    if not text:
        raise BadRequest("A message needs its text (message).")
    category = _CATEGORIES.get((text_field(fields, "category") or "information").lower())
    if category is None:
        raise BadRequest("A message's category is Information, Warning or Error.")
    message = {"kind": kind, "message": text, "category": category, "details": text_field(fields, "details")}
    if kind == "compilation":
        for name in ("fileName", "line", "column", "projectName", "projectFileName"):
            message[name] = text_field(fields, name)
    return message


def reported_test(fields: dict[str, Any], update: bool = False) -> dict[str, Any]:
    """A test as the service stores it; an update leaves out (None) what it does not change, the outcome too."""
    name = text_field(fields, "testName", "name")
    if not name:
        raise BadRequest("A test needs its name (testName).")
    outcome_text = text_field(fields, "outcome") or (None if update else "None")
    outcome = None if outcome_text is None else _OUTCOMES.get(outcome_text.lower())
    if outcome_text is not None and outcome is None:
        raise BadRequest(f"A test's outcome is one of {', '.join(OUTCOMES)}.")
    duration = _field(fields, "durationMilliseconds", "duration")
    try:
        milliseconds = None if duration in (None, "") else int(float(duration))
    except (TypeError, ValueError) as error:
        raise BadRequest("A test's durationMilliseconds is a number.") from error
    return {
        "testName": name,
        "testFramework": text_field(fields, "testFramework", "framework"),
        "fileName": text_field(fields, "fileName"),
        "outcome": outcome,
        "durationMilliseconds": milliseconds,
        "ErrorMessage": text_field(fields, "ErrorMessage"),
        "ErrorStackTrace": text_field(fields, "ErrorStackTrace"),
        "StdOut": text_field(fields, "StdOut"),
        "StdErr": text_field(fields, "StdErr"),
    }
