"""A job's messages and tests, as its runner or a key from outside the build reports them, held to its quotas."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from chalicelib.core.jobs import Job, ReportQuota
from chalicelib.core.reports import SENT_FROM_OUTSIDE, failure_marks, sent_from_outside
from chalicelib.errors import Conflict, Invalid
from chalicelib.store import jobs as job_store
from chalicelib.store import reports

MAX_REPORTS_PER_CALL = 1000
MAX_REPORTS_PER_JOB = 100_000  # messages and tests together
# tests keys send from outside the build (POST /api/testresults/...): one full results file's, counted apart, so
# whoever may run builds cannot use up the room the build has for its own reports (and have its failures refused)
MAX_OUTSIDE_REPORTS_PER_JOB = 10_000
# the bytes those reports store (JSON, failure marks included): 100,000 reports of 64 KiB would be 6 GiB of a table
MAX_REPORT_BYTES_PER_JOB = 100 * 1024**2
MAX_OUTSIDE_REPORT_BYTES_PER_JOB = 10 * 1024**2  # two results files of 5 MiB, as stored
MAX_FIELD_LENGTH = 64 * 1024
MAX_REPORT_BYTES = 64 * 1024  # a report as stored (a DynamoDB item holds 400 KB at most)


def add_messages(job: Job, messages: list[dict[str, Any]]) -> None:
    """Store build messages and compilation messages the job's scripts reported."""
    _check_count(messages)
    stored = []
    for message in messages:
        kind = message.get("kind")
        if kind not in (reports.MESSAGE, reports.COMPILATION):
            raise Invalid("A message's kind is 'message' or 'compilation'.")
        if message.get("category") not in ("information", "warning", "error") or not message.get("message"):
            raise Invalid("A message needs its text and a category: information, warning or error.")
        stored.append((str(kind), _sized(_bounded({k: v for k, v in message.items() if k != "kind"}))))
    _take_quota(job, stored)
    reports.add_reports(job.job_id, stored)


def add_tests(job: Job, tests: list[dict[str, Any]], update: bool) -> None:
    """Store tests the job's scripts reported; an update changes the fields it carries of a test of that name."""
    _check_count(tests)
    if not all(isinstance(test, dict) and test.get("testName") for test in tests):
        raise Invalid("Every test needs its name (testName).")
    # the mark of a test sent from outside is the service's to set, never the build's
    fresh = [{k: v for k, v in _bounded(test).items() if k != SENT_FROM_OUTSIDE} for test in tests]
    first_reported: dict[str, datetime] = {}
    if update:
        before = reports.get_tests(job.job_id, [str(test["testName"]) for test in fresh])
        # what a key sent from outside (an item stored before issue 43) is no part of the build's own test
        before = {name: report for name, report in before.items() if not sent_from_outside(report)}
        merged = []
        for test in fresh:
            earlier = before.get(str(test["testName"]))
            merged.append({**(earlier.body if earlier else {}), **{k: v for k, v in test.items() if v is not None}})
        fresh = merged
        first_reported = {name: report.created for name, report in before.items()}
    sized = [(reports.TEST, _sized(test)) for test in fresh]
    stored = sized + failure_marks(sized)
    _take_quota(job, stored, len(sized))
    reports.add_reports(job.job_id, stored, first_reported)


def add_parsed_tests(job: Job, tests: list[dict[str, Any]], outside: bool = False) -> None:
    """Store the tests of a result file (domain/testing/result_files.py): each checked for size before any is stored,
    and the job's quota taken for all of them at once. Tests sent from outside the build (``outside``: marked so) get
    items of their own (store/reports.py), which never replace what the build reported, and a quota of their own."""
    sized = [(reports.TEST, _sized(_bounded(test))) for test in tests]
    stored = sized + failure_marks(sized)
    if outside:
        _take_outside_quota(job, stored, len(sized))
    else:
        _take_quota(job, stored, len(sized))
    reports.add_reports(job.job_id, stored)


def _check_count(items: list[Any]) -> None:
    if not isinstance(items, list) or not 0 < len(items) <= MAX_REPORTS_PER_CALL:
        raise Invalid(f"Send 1 to {MAX_REPORTS_PER_CALL} at a time.")


def _quota(stored: list[tuple[str, dict[str, Any]]], count: int | None) -> ReportQuota:
    """What ``stored`` takes of a quota: ``count`` reports (failure marks are not counted as reports, their bytes
    are), and the bytes of every item as stored."""
    size = sum(len(json.dumps(body)) for _, body in stored)
    return ReportQuota(len(stored) if count is None else count, size)


def _take_quota(job: Job, stored: list[tuple[str, dict[str, Any]]], count: int | None = None) -> None:
    limit = ReportQuota(MAX_REPORTS_PER_JOB, MAX_REPORT_BYTES_PER_JOB)
    passed = job_store.take_report_quota(job.job_id, _quota(stored, count), limit)
    if passed == "count":
        raise Conflict(f"A job keeps at most {MAX_REPORTS_PER_JOB:,} messages and tests.")
    if passed == "bytes":
        raise Conflict(f"A job keeps at most {MAX_REPORT_BYTES_PER_JOB:,} bytes of messages and tests (as JSON).")


def _take_outside_quota(job: Job, stored: list[tuple[str, dict[str, Any]]], count: int) -> None:
    limit = ReportQuota(MAX_OUTSIDE_REPORTS_PER_JOB, MAX_OUTSIDE_REPORT_BYTES_PER_JOB)
    passed = job_store.take_report_quota(job.job_id, _quota(stored, count), limit, outside=True)
    if passed is not None:
        cap = (
            f"{MAX_OUTSIDE_REPORTS_PER_JOB:,} tests"
            if passed == "count"
            else (f"{MAX_OUTSIDE_REPORT_BYTES_PER_JOB:,} bytes of tests (as JSON)")
        )
        raise Conflict(
            f"A job keeps at most {cap} sent from outside the build (with a key); the build's own reports are "
            "counted apart."
        )


def _sized(report: dict[str, Any]) -> dict[str, Any]:
    """The report, unless it is too big to keep: a 400 naming the limit."""
    if len(json.dumps(report)) > MAX_REPORT_BYTES:
        raise Invalid(f"A message or test is at most {MAX_REPORT_BYTES:,} bytes as JSON.")
    return report


def _bounded(fields: dict[str, Any]) -> dict[str, Any]:
    """A report's fields, each a string, number or null, texts cut at MAX_FIELD_LENGTH."""
    bounded: dict[str, Any] = {}
    for name, value in list(fields.items())[:32]:
        _utf8(str(name))
        if isinstance(value, str):
            _utf8(value)
            bounded[str(name)[:64]] = value[:MAX_FIELD_LENGTH]
        elif value is None or isinstance(value, bool | int | float):
            bounded[str(name)[:64]] = value
        else:
            raise Invalid(f"Field {str(name)[:64]} must be a string, a number or null.")
    return bounded


def _utf8(text: str) -> None:
    """A 400 for text UTF-8 cannot carry: JSON's \\ud800, a lone surrogate, names no test a key is made of."""
    try:
        text.encode()
    except UnicodeEncodeError as error:
        raise Invalid("A message or test holds text that is not valid Unicode (a lone surrogate).") from error
