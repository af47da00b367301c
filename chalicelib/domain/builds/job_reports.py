"""What a job's scripts reported through the Build Worker API, read by a caller who may view the job."""

from __future__ import annotations

from chalicelib.core.reports import Report
from chalicelib.domain.builds.build_lookup import find_job
from chalicelib.domain.team.auth import Caller
from chalicelib.store import reports


def job_messages(caller: Caller, job_id: str) -> list[Report]:
    """The job's build messages and compilation messages together, in the order they were reported."""
    find_job(caller, job_id)
    found = reports.list_reports(job_id, reports.MESSAGE) + reports.list_reports(job_id, reports.COMPILATION)
    return sorted(found, key=lambda report: report.created)


def job_tests(caller: Caller, job_id: str) -> list[Report]:
    """The job's tests, in the order they were first reported (an update keeps a test's place)."""
    find_job(caller, job_id)
    found = reports.list_reports(job_id, reports.TEST)
    return sorted(found, key=lambda report: (report.created, str(report.body.get("testName"))))
