"""Which report of a test the job's counts, the quarantine and the history take (issue 43)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.core.reports import FAILED_MARK, SENT_FROM_OUTSIDE, TEST, Report, counted_tests, failure_marks

AT = datetime(2026, 1, 1, tzinfo=UTC)


def reported(name: str, outcome: str, outside: bool = False, later: int = 0) -> Report:
    body = {"testName": name, "outcome": outcome, **({SENT_FROM_OUTSIDE: True} if outside else {})}
    return Report(TEST, body, AT + timedelta(seconds=later))


def outcomes(reports: list[Report]) -> dict[str, tuple[str, bool]]:
    return {r.body["testName"]: (r.body["outcome"], bool(r.body.get(SENT_FROM_OUTSIDE))) for r in reports}


def test_the_builds_own_report_counts_over_one_sent_from_outside() -> None:
    counted = counted_tests([reported("f", "Failed"), reported("f", "Passed", outside=True, later=1)], [])

    assert outcomes(counted) == {"f": ("Failed", False)}


def test_a_test_only_sent_from_outside_counts_as_sent() -> None:
    counted = counted_tests([reported("q", "Failed", outside=True), reported("f", "Passed")], [])

    assert outcomes(counted) == {"q": ("Failed", True), "f": ("Passed", False)}


def test_a_failure_the_build_reported_stays_a_failure_when_it_reports_a_pass_later() -> None:
    marks = [
        Report(FAILED_MARK, body, AT)
        for _, body in failure_marks([(TEST, {"testName": "f", "outcome": "Failed", "ErrorMessage": "broke"})])
    ]

    (counted,) = counted_tests([reported("f", "Passed", later=1)], marks)

    assert (counted.body["testName"], counted.body["outcome"]) == ("f", "Failed")


def test_a_failure_mark_keeps_only_what_names_the_test() -> None:
    big = "x" * 60_000
    failed = {"testName": "f", "testFramework": "NUnit", "fileName": "m.cs", "outcome": "Failed"}

    ((_, mark),) = failure_marks([(TEST, {**failed, "ErrorMessage": big, "ErrorStackTrace": big, "StdOut": big})])

    assert mark == {"testName": "f", "testFramework": "NUnit", "fileName": "m.cs"}


def test_only_the_builds_own_failures_leave_a_mark() -> None:
    sent = [
        (TEST, {"testName": "f", "outcome": "Failed"}),
        (TEST, {"testName": "q", "outcome": "Failed", SENT_FROM_OUTSIDE: True}),
        (TEST, {"testName": "p", "outcome": "Passed"}),
    ]

    assert failure_marks(sent) == [(FAILED_MARK, {"testName": "f"})]
