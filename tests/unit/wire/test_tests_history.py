"""A project's tests and their runs as the API shows them: no IO. (The module's functions are named test_*: it is
imported whole, so that pytest does not take them for tests.)"""

from __future__ import annotations

from chalicelib.wire import tests_history as shapes


def test_a_summary_shows_every_field_and_flags_absent_ones_as_false() -> None:
    shown = shapes.test_summary_json({"testId": "t1", "testName": "adds", "runs": 4, "failures": 1})

    assert shown["testName"] == "adds" and shown["runs"] == 4 and shown["failureRate"] is None
    assert (shown["flaky"], shown["quarantined"], shown["recentOutcomes"], shown["lastFailure"]) == (
        False,
        False,
        "",
        None,
    )


def test_a_summary_shows_its_last_failure_as_a_run_with_a_wire_timestamp() -> None:
    last = {"outcome": "Failed", "at": 0, "buildVersion": "1.0.4", "errorMessage": "boom"}

    shown = shapes.test_summary_json({"testId": "t1", "lastFailure": last, "flaky": 1})["lastFailure"]

    assert (shown["outcome"], shown["buildVersion"], shown["errorMessage"]) == ("Failed", "1.0.4", "boom")
    assert shown["finished"] == "1970-01-01T00:00:00.0000000+00:00"


def test_quarantined_tests_are_listed_by_name() -> None:
    body = {"enabled": True, "tests": {"b": {"testName": "zeta", "since": 0}, "a": {"testName": "alpha", "since": 0}}}

    shown = shapes.quarantine_json(body)

    assert shown["enabled"] is True
    assert [test["testName"] for test in shown["tests"]] == ["alpha", "zeta"]
