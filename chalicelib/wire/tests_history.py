"""Shapes of a project's tests (Conveyor's extension, issue 38): a test's summary, one of its runs, the quarantine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.shapes.time import timestamp

SUMMARY_FIELDS = (
    "testId",
    "testName",
    "testFramework",
    "fileName",
    "runs",
    "failures",
    "failureRate",
    "medianMilliseconds",
    "p95Milliseconds",
)


def test_summary_json(summary: dict[str, Any]) -> dict[str, Any]:
    """A test as the project's tests list shows it."""
    shape = {name: summary.get(name) for name in SUMMARY_FIELDS}
    last = summary.get("lastFailure")
    shape["lastFailure"] = test_run_json(last) if isinstance(last, dict) else None
    shape["flaky"] = bool(summary.get("flaky"))
    shape["quarantined"] = bool(summary.get("quarantined"))
    shape["recentOutcomes"] = str(summary.get("recentOutcomes") or "")
    return shape


def test_run_json(run: dict[str, Any]) -> dict[str, Any]:
    """One run of a test: one job attempt's outcome."""
    return {
        "outcome": run.get("outcome"),
        "durationMilliseconds": run.get("durationMilliseconds"),
        "commitId": run.get("commitId"),
        "branch": run.get("branch"),
        "jobName": run.get("jobName"),
        "jobId": run.get("jobId"),
        "buildId": run.get("buildId"),
        "buildVersion": run.get("buildVersion"),
        "attempt": run.get("attempt"),
        "finished": timestamp(datetime.fromtimestamp(int(run.get("at") or 0), UTC)),
        "errorMessage": run.get("errorMessage"),
        "sentFromOutside": bool(run.get("sentFromOutside")),  # runs stored before issue 43 lack it (false)
    }


def quarantine_json(body: dict[str, Any]) -> dict[str, Any]:
    """Whether quarantine is on, and its tests by name."""
    held = body.get("tests") or {}
    tests = [
        {
            "testId": test_id,
            "testName": str(entry.get("testName")),
            "since": timestamp(datetime.fromtimestamp(int(entry.get("since") or 0), UTC)),
        }
        for test_id, entry in sorted(held.items(), key=lambda item: str(item[1].get("testName")))
    ]
    return {"enabled": bool(body.get("enabled")), "tests": tests}
