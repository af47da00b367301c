"""/api/projects/{accountName}/{projectSlug}/tests: a project's tests, one test's history, the quarantine
(Conveyor's extension, issue 38)."""

from __future__ import annotations

from typing import Any

from chalicelib.api.calls import Call
from chalicelib.domain.shared.validation import invalid
from chalicelib.domain.testing import tests_history
from chalicelib.errors import Invalid
from chalicelib.wire.fields import Fields
from chalicelib.wire.tests_history import quarantine_json, test_run_json, test_summary_json


def _query(call: Call, name: str) -> str | None:
    params: Any = call.request.query_params or {}
    value = params.get(name)
    return None if value in (None, "") else str(value)


def list_project_tests(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    sort = (_query(call, "sort") or "name").lower()
    if sort not in tests_history.SORTS:
        raise Invalid(f"sort is one of {', '.join(tests_history.SORTS)}.")
    tests, enabled = tests_history.project_tests(call.caller, accountName, projectSlug, sort)
    return {"tests": [test_summary_json(test) for test in tests], "quarantine": enabled}


def get_test_history(call: Call, accountName: str, projectSlug: str, testId: str) -> dict[str, Any]:
    before = _query(call, "before")
    summary, runs, after = tests_history.test_history(call.caller, accountName, projectSlug, testId, before)
    return {"test": test_summary_json(summary), "runs": [test_run_json(run) for run in runs], "next": after}


def get_test_quarantine(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    return quarantine_json(tests_history.get_quarantine(call.caller, accountName, projectSlug))


def update_test_quarantine(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    fields = Fields(call.json())
    if not isinstance(fields.body.get("enabled"), bool):
        raise invalid("enabled", "enabled must be true or false.")
    enabled = fields.boolean("enabled")
    return quarantine_json(tests_history.set_quarantine(call.caller, accountName, projectSlug, enabled))


def clear_test_quarantine(call: Call, accountName: str, projectSlug: str) -> dict[str, Any]:
    return quarantine_json(tests_history.release_tests(call.caller, accountName, projectSlug, None))


def release_quarantined_test(call: Call, accountName: str, projectSlug: str, testId: str) -> dict[str, Any]:
    return quarantine_json(tests_history.release_tests(call.caller, accountName, projectSlug, testId))
