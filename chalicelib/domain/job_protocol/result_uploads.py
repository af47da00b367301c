"""Test result files uploaded to a running job (``POST /api/testresults/{format}/{jobId}``), by its own runner with
the job token, or from outside with a key that may run the project's builds.

A file is parsed whole before anything is stored: a malformed or hostile one (domain/testing/result_files.py) is a 400
that leaves the job's tests as they were.
"""

from __future__ import annotations

from typing import Any

from chalicelib.core.jobs import Job
from chalicelib.core.reports import SENT_FROM_OUTSIDE
from chalicelib.core.status import Status
from chalicelib.domain.job_identity import job_tokens
from chalicelib.domain.job_protocol import job_reports
from chalicelib.domain.team.access import Right, require_right
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.testing import result_files
from chalicelib.errors import Conflict, NotFound
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store

JOB_NOT_FOUND = "Job not found or access denied."


def job_for_token(job_id: str, authorization: str | None) -> Job:
    """The job a runner forwards a file for (the Build Worker API's route), checked against the job's token."""
    return job_tokens.runner_job(job_id, authorization)


def job_for_caller(caller: Caller, job_id: str) -> Job:
    """The job a file sent from outside the build goes to: its caller must hold RunBuild on the job's project, and
    the job must be running."""
    job = job_store.get_job(job_id)
    if job is None or job.account_id != caller.account_id or job.deployment_id is not None:
        raise NotFound(JOB_NOT_FOUND)
    project = project_store.get_project_by_id(caller.account_id, job.project_id)
    if project is None:
        raise NotFound(JOB_NOT_FOUND)
    require_right(caller, project, Right.RUN_BUILD)
    if Status(job.status) is not Status.RUNNING:
        raise Conflict(f"Job {job_id} is {job.status}: test results are taken while a job runs.")
    return job


def store_results(job: Job, format_name: str, data: bytes, from_build: bool) -> dict[str, Any]:
    """Parse the file whole, then store its tests as the job's (a test of a name reported before is replaced).

    Tests sent with a key rather than by the build (``from_build``) are marked and kept apart: they show in the job
    beside the build's own, but never replace them (store/reports.py), count only where the build reported no test
    of that name, excuse no failure in the quarantine and make no test flaky (domain/testing/tests_history.py), for
    whoever may run builds could otherwise rewrite what the build reported and, with quarantine on, hide its real
    failures (issue 43)."""
    tests = result_files.parse(format_name, data)
    if not from_build:
        tests = [{SENT_FROM_OUTSIDE: True, **test} for test in tests]
    if tests:
        job_reports.add_parsed_tests(job, tests, outside=not from_build)
    return {
        "testsCount": len(tests),
        "passedTestsCount": sum(1 for test in tests if test["outcome"] == "Passed"),
        "failedTestsCount": sum(1 for test in tests if test["outcome"] == "Failed"),
    }
