"""What running jobs report through the Build Worker API: messages, compilation messages and tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.core.reprs import FieldsRepr

MESSAGE = "message"
COMPILATION = "compilation"
TEST = "test"
SENT_FROM_OUTSIDE = "sentFromOutside"  # a stored test's mark: a key sent it (a results file), not the build's runner


@dataclass(frozen=True, repr=False)
class Report(FieldsRepr):
    """A message, compilation message or test a running job reported."""

    kind: str  # MESSAGE, COMPILATION or TEST
    body: dict[str, Any]
    created: datetime  # a test's: when it was first reported


# A test the build reported failed leaves this mark, which no later report of the attempt takes away: a build that
# reports the test again (passed), or anyone's upload, does not make its failure go unseen. It keeps only what names
# the test (its message and stack trace stay in the test's own report): marks are not counted apart from the tests.
FAILED_MARK = "failedTest"
_MARKED_FIELDS = ("testName", "testFramework", "fileName")
FAILED = "Failed"


def sent_from_outside(report: Report) -> bool:
    """Whether a key sent this test into the job (a results file from outside the build), not the build's runner."""
    return bool(report.body.get(SENT_FROM_OUTSIDE))


def failure_marks(tests: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The marks the build's own failed tests among ``tests`` leave (a test sent from outside leaves none)."""
    return [
        (FAILED_MARK, {name: body[name] for name in _MARKED_FIELDS if body.get(name) is not None})
        for kind, body in tests
        if kind == TEST and body.get("outcome") == FAILED and not body.get(SENT_FROM_OUTSIDE)
    ]


def counted_tests(tests: list[Report], marks: list[Report]) -> list[Report]:
    """One test per name, as the job's counts, the quarantine and the test history take them: the build's own report
    (Failed if the build ever reported it failed in this attempt), else what was sent from outside."""
    failed = {str(mark.body.get("testName")): mark for mark in marks}
    outside: dict[str, Report] = {}
    own: dict[str, Report] = {}
    for report in sorted(tests, key=lambda report: report.created):
        name = str(report.body.get("testName"))
        (outside if sent_from_outside(report) else own)[name] = report
    counted = {**outside, **own}
    for name, report in own.items():
        mark = failed.get(name)
        if mark is not None and report.body.get("outcome") != FAILED:
            counted[name] = Report(report.kind, {**mark.body, **report.body, "outcome": FAILED}, report.created)
    return list(counted.values())
