"""What running jobs report through the Build Worker API: messages, compilation messages and tests, per job."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.core.reports import COMPILATION, FAILED_MARK, MESSAGE, SENT_FROM_OUTSIDE, TEST, Report
from chalicelib.store.delivery_models import JobReportModel


def _report_key(kind: str, body: dict[str, Any]) -> str:
    if kind in (TEST, FAILED_MARK):  # one item per test name, so an update replaces it
        named = f"{kind}#{hashlib.sha256(str(body['testName']).encode()).hexdigest()}"
        # a test sent from outside the build has an item of its own: it never replaces what the build reported
        # (an item of the build's own key that carries the mark was stored before, when it could)
        return f"{named}#outside" if body.get(SENT_FROM_OUTSIDE) else named
    return f"{kind}#{time.time_ns():020d}{secrets.token_hex(4)}"


def add_reports(
    job_id: str, reports: Iterable[tuple[str, dict[str, Any]]], first_reported: Mapping[str, datetime] | None = None
) -> None:
    """Store reports of one job; a test of a name already reported replaces it, keeping the time it was first
    reported when ``first_reported`` (by test name) has it."""
    now = datetime.now(UTC)
    items: dict[str, JobReportModel] = {}  # one write per key: a batch may not name an item twice
    for index, (kind, body) in enumerate(reports):
        key = _report_key(kind, body)
        created = (first_reported or {}).get(str(body.get("testName"))) if kind == TEST else None
        if key in items:  # the same test twice in one batch: the last word stands, at the first one's place
            created = items.pop(key).created
        # a microsecond apart, so that reports sent together list in the order they were sent
        items[key] = JobReportModel(job_id, key, body=body, created=created or now + timedelta(microseconds=index))
    with JobReportModel.batch_write() as batch:
        for model in items.values():
            batch.save(model)


def get_tests(job_id: str, names: list[str]) -> dict[str, Report]:
    """Tests the build reported before, by name (to update them); names it never reported are left out."""
    keys = {_report_key(TEST, {"testName": name}): name for name in names}
    found = JobReportModel.batch_get([(job_id, key) for key in keys])
    return {keys[model.report]: Report(TEST, dict(model.body), model.created) for model in found}


def list_reports(job_id: str, kind: str) -> list[Report]:
    """A job's reports of one kind: messages in the order they came, tests by their name's hash (a test the build
    reported and one sent from outside the build under the same name are two)."""
    return [
        Report(kind, dict(model.body), model.created)
        for model in JobReportModel.query(job_id, JobReportModel.report.startswith(f"{kind}#"))
    ]


def reports_by_kind(job_id: str) -> dict[str, list[Report]]:
    """Every report of a job in one query, by kind (each kind in list_reports' order)."""
    found: dict[str, list[Report]] = {MESSAGE: [], COMPILATION: [], TEST: [], FAILED_MARK: []}
    for model in JobReportModel.query(job_id):
        kind = model.report.partition("#")[0]
        found.setdefault(kind, []).append(Report(kind, dict(model.body), model.created))
    return found


def delete_reports(job_ids: Iterable[str]) -> None:
    """Remove every report of these jobs (their build is deleted, or they run again)."""
    with JobReportModel.batch_write() as batch:
        for job_id in job_ids:
            for model in JobReportModel.query(job_id, attributes_to_get=["job_id", "report"]):
                batch.delete(model)
