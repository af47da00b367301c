"""The shapes of what jobs reported: messages (build and compilation alike) and tests, from stored reports."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.core.reports import COMPILATION, MESSAGE, TEST, Report
from chalicelib.wire.reports import message_json, reported_test_json

MOMENT = datetime(2026, 11, 24, 17, 0, 0, 123456, tzinfo=UTC)


def report(kind: str, **body: Any) -> Report:
    return Report(kind, body, MOMENT)


def test_a_build_message_has_its_type_category_text_details_and_time() -> None:
    shape = message_json(report(MESSAGE, message="Deprecated", category="warning", details="use --new"))

    assert shape == {
        "type": "Message",
        "message": "Deprecated",
        "category": "warning",
        "details": "use --new",
        "created": "2026-11-24T17:00:00.1234560+00:00",
    }


def test_a_compilation_message_says_where_it_points_with_numbers_for_line_and_column() -> None:
    shape = message_json(report(COMPILATION, message="unused x", category="error", fileName="a.c", line="12"))

    assert shape["type"] == "Compilation"
    assert (shape["fileName"], shape["line"], shape["column"]) == ("a.c", 12, None)
    assert (shape["projectName"], shape["projectFileName"], shape["details"]) == (None, None, None)


def test_a_message_without_details_or_category_shows_null_and_information() -> None:
    assert message_json(report(MESSAGE, message="Command exited with code 1", category="error"))["details"] is None
    assert message_json(report(MESSAGE, message="no category"))["category"] == "information"


def test_a_test_has_every_field_of_the_build_worker_api_and_its_time() -> None:
    shape = reported_test_json(
        report(TEST, testName="adds", testFramework="NUnit", fileName="m.cs", outcome="Failed", ErrorMessage="boom")
    )

    assert shape == {
        "testName": "adds",
        "testFramework": "NUnit",
        "fileName": "m.cs",
        "outcome": "Failed",
        "durationMilliseconds": None,
        "ErrorMessage": "boom",
        "ErrorStackTrace": None,
        "StdOut": None,
        "StdErr": None,
        "created": "2026-11-24T17:00:00.1234560+00:00",
        "sentFromOutside": False,
    }


def test_a_test_a_key_sent_from_outside_the_build_is_marked() -> None:
    assert reported_test_json(report(TEST, testName="t", sentFromOutside=True))["sentFromOutside"] is True


def test_a_test_without_an_outcome_shows_none() -> None:
    assert reported_test_json(report(TEST, testName="t", outcome=None))["outcome"] == "None"


@pytest.mark.parametrize(
    ("sent", "shown"),
    [(12, 12), (4.7, 4), ("25", 25), ("4.5", 4), (None, None), ("", None), ("slow", None), (True, None), ("inf", None)],
)
def test_a_tests_duration_is_whole_milliseconds_or_null(sent: Any, shown: int | None) -> None:
    assert reported_test_json(report(TEST, testName="t", durationMilliseconds=sent))["durationMilliseconds"] == shown
