"""Per-test history, flakiness and quarantine (issue 38): what a job's tests add when its attempt ends, what a
project's tests list and one test's history show, and which failures quarantine lets pass.

A test is named by its framework, file and name (``test_id``). Each job's attempt that reported it adds a run,
kept by project, test, commit, branch, job name and attempt; its working state and summary follow (core/flakiness.py
says when it is flaky), except a pull request's, whose author chooses what it reports. A project's quarantine,
when on, holds the tests that flaked: a job whose test_script failed only by such tests goes on (or ends) green,
saying which (runner/job_phases.py asks).
"""

from __future__ import annotations

import hashlib
import logging
import time
from datetime import datetime
from typing import Any

from chalicelib.core import flakiness
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.reports import Report, counted_tests, sent_from_outside
from chalicelib.domain.projects.project_lookup import find_project
from chalicelib.domain.projects.request_variables import withholds_secrets
from chalicelib.domain.team.access import Right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Conflict, NotFound
from chalicelib.store import reports
from chalicelib.store import tests_history as store

log = logging.getLogger(__name__)
SORTS = ("name", "slowest", "failing", "flaky")
TEST_NOT_FOUND = "Test not found: the project's jobs never reported it."
_WRITE_ROUNDS = 5


def test_id_of(framework: str | None, file_name: str | None, name: str) -> str:
    """A test's id: its framework, file and name, hashed to a short URL-safe key."""
    identity = "\x00".join((framework or "", file_name or "", name))
    return hashlib.sha256(identity.encode()).hexdigest()[:24]


def record_job_tests(job: Job, build: Build, tests: list[Report], finished: datetime) -> None:
    """Add the runs of a job's attempt that is ending to its tests' history (``tests``: one per name, as
    core/reports.counted_tests gives them); tests that flaked enter the project's quarantine when it is on. A finish
    sent again for the same attempt adds nothing more."""
    runs: dict[str, tuple[flakiness.Run, Report]] = {}
    at = int(finished.timestamp())
    for report in tests:
        body = report.body
        name = str(body.get("testName") or "")
        if not name:
            continue
        test_id = test_id_of(body.get("testFramework"), body.get("fileName"), name)
        duration = body.get("durationMilliseconds")
        run = flakiness.Run(
            at=at,
            outcome=str(body.get("outcome") or "None"),
            duration=int(duration) if isinstance(duration, int | float) and not isinstance(duration, bool) else None,
            commit=str(build.commit.get("commitId") or ""),
            branch=build.branch,
            job_name=job.name,
            build_id=build.build_id,
            build_version=build.version,
            job_id=job.job_id,
            attempt=max(1, job.attempts),
            error=(str(body["ErrorMessage"])[:500] if body.get("ErrorMessage") else None),
            sent_from_outside=sent_from_outside(report),
        )
        runs[test_id] = (run, report)
    if not runs:
        return
    # a pull request's build reports what its author wants (a fork's, anyone's), and so does one started with
    # variables by someone who may not change the project: their runs are kept in each test's history, but never
    # make a test flaky, nor put it in quarantine, nor change its summary
    # Tests a key sent into the job (domain/job_protocol/result_uploads.py) are kept too, and leave the states
    # alone likewise.
    own = {test_id: run for test_id, run in runs.items() if not run[0].sent_from_outside}
    flaked = [] if withholds_secrets(build) or not own else _update_states(job.project_id, own)
    store.add_test_runs(
        job.project_id,
        [
            (test_id, f"{finished.isoformat()}#{job.job_id}#{run.attempt:04d}", flakiness.run_json(run))
            for test_id, (run, _) in runs.items()
        ],
    )
    if flaked:
        _quarantine(job.project_id, {test_id: runs[test_id][0] for test_id in flaked}, runs)


def _update_states(project_id: int, runs: dict[str, tuple[flakiness.Run, Report]]) -> list[str]:
    """Each test's working state and summary with its new run, written under the version read (a test another
    job wrote meanwhile is read and written again); the ids of the tests that flaked with this run."""
    pending = list(runs)
    flaked: list[str] = []
    for _ in range(_WRITE_ROUNDS):
        stored = store.get_working_states(project_id, pending)
        updates = []
        for test_id in pending:
            run, report = runs[test_id]
            found = stored.get(test_id)
            if found is not None and found.body.get("lastRun") == _run_key(run):
                continue  # a finish sent again after this attempt's runs were written: counted once
            state = (
                flakiness.state_of(found.body)
                if found
                else flakiness.TestState(
                    name=str(report.body.get("testName")),
                    framework=report.body.get("testFramework"),
                    file_name=report.body.get("fileName"),
                )
            )
            state = flakiness.record(state, run)
            if state.flaky_at == run.at and test_id not in flaked:
                flaked.append(test_id)
            summary = flakiness.summary(state, test_id)
            body = {**flakiness.state_json(state), "lastRun": _run_key(run)}
            updates.append((test_id, body, summary, found.version if found else 0))
        pending = store.save_working_states(project_id, updates)
        if not pending:
            return flaked
    raise Conflict("The project's tests changed too often meanwhile: their history could not be written.")


def _run_key(run: flakiness.Run) -> str:
    return f"{run.job_id}#{run.attempt}"


def _quarantine(project_id: int, flaked: dict[str, flakiness.Run], runs: dict[str, Any]) -> None:
    """Put the tests that flaked into the project's quarantine, when it is on."""
    for _ in range(_WRITE_ROUNDS):
        found = store.get_quarantine(project_id)
        if found is None or not found.body.get("enabled"):
            return
        held = dict(found.body.get("tests") or {})
        for test_id, run in flaked.items():
            name = str(runs[test_id][1].body.get("testName"))
            held.setdefault(test_id, {"testName": name, "since": run.at})
        if store.save_quarantine(project_id, {**found.body, "tests": held}, found.version):
            return


def quarantined_failures(job: Job) -> list[str]:
    """The names of the job's failed tests when every one of them is in its project's quarantine (and it is
    on); an empty list when none failed, quarantine is off, or a failed test is not in it.

    Only what the build reported itself counts: a test it ever reported failed in this attempt failed, whatever was
    reported since; a test only a key sent from outside the build failed lets nothing pass (issue 43), for whoever
    may run builds could otherwise send a quarantined test's failure (and the real one's pass) into a failed job."""
    marks = reports.list_reports(job.job_id, reports.FAILED_MARK)
    counted = counted_tests(reports.list_reports(job.job_id, reports.TEST), marks)
    tests = [t for t in counted if not sent_from_outside(t)]
    failed = {
        test_id_of(t.body.get("testFramework"), t.body.get("fileName"), str(t.body.get("testName"))): str(
            t.body.get("testName")
        )
        for t in tests
        if t.body.get("outcome") == "Failed"
    }
    if not failed:
        return []
    found = store.get_quarantine(job.project_id)
    if found is None or not found.body.get("enabled"):
        return []
    held = found.body.get("tests") or {}
    if not all(test_id in held for test_id in failed):
        return []
    return sorted(failed.values())


def quarantine_job_failures(job: Job) -> list[str]:
    """A runner asks, its test_script having failed: the names of the job's failed tests when all are in the
    quarantine, which the job's messages now name; else none, and the failure stands."""
    names = quarantined_failures(job)
    if names:
        shown = ", ".join(names[:50]) + (f" and {len(names) - 50} more" if len(names) > 50 else "")
        text = f"Quarantined flaky tests failed and did not fail the job: {shown}."
        reports.add_reports(job.job_id, [(reports.MESSAGE, {"message": text[:4096], "category": "warning"})])
    return names


# Reads.


def project_tests(caller: Caller, account_name: str, slug: str, sort: str) -> tuple[list[dict[str, Any]], bool]:
    """Every test of the project, as summaries with ``flaky`` and ``quarantined``, in ``sort``'s order; and
    whether quarantine is on. Two calls: the project, then its quarantine and summaries in one Query."""
    project = find_project(caller, account_name, slug)
    quarantine, summaries = store.quarantine_and_summaries(project.project_id)
    held = (quarantine.body.get("tests") or {}) if quarantine else {}
    now = int(time.time())
    shaped = [_with_flags(summary, held, now) for summary in summaries]
    shaped.sort(key=_SORT_KEYS[sort])
    return shaped, bool(quarantine and quarantine.body.get("enabled"))


def test_history(
    caller: Caller, account_name: str, slug: str, test_id: str, before: str | None
) -> tuple[dict[str, Any], list[dict[str, Any]], str | None]:
    """One test's summary and its runs, newest first, a page at a time. Three calls."""
    project = find_project(caller, account_name, slug)
    summary = store.get_test_summary(project.project_id, test_id)
    if summary is None:
        raise NotFound(TEST_NOT_FOUND)
    runs, after = store.list_test_runs(project.project_id, test_id, before)
    return _with_flags(summary, {}, int(time.time()), quarantined=None), runs, after


def _with_flags(
    summary: dict[str, Any], held: dict[str, Any], now: int, quarantined: bool | None = False
) -> dict[str, Any]:
    flaky = flakiness.is_flaky(
        summary.get("flakyAt"), summary.get("lastFailedAt"), int(summary.get("passStreak") or 0), now
    )
    shaped = {**summary, "flaky": flaky}
    if quarantined is not None:
        shaped["quarantined"] = summary.get("testId") in held
    return shaped


_SORT_KEYS: dict[str, Any] = {
    "name": lambda s: str(s.get("testName")),
    "slowest": lambda s: (-(s.get("p95Milliseconds") or 0), str(s.get("testName"))),
    "failing": lambda s: (-(s.get("failureRate") or 0), -(s.get("failures") or 0), str(s.get("testName"))),
    "flaky": lambda s: (not s["flaky"], -(s.get("failureRate") or 0), str(s.get("testName"))),
}


# The quarantine, by hand.


def get_quarantine(caller: Caller, account_name: str, slug: str) -> dict[str, Any]:
    """Whether quarantine is on, and the tests in it."""
    project = find_project(caller, account_name, slug)
    found = store.get_quarantine(project.project_id)
    return found.body if found else {"enabled": False, "tests": {}}


def set_quarantine(caller: Caller, account_name: str, slug: str, enabled: bool) -> dict[str, Any]:
    """Turn the project's quarantine on or off (the tests in it stay, for when it is on again)."""
    project = find_project(caller, account_name, slug, Right.UPDATE)
    flaky: dict[str, Any] = {}
    if enabled:  # the tests flaky now go into it at once
        now = int(time.time())
        _, summaries = store.quarantine_and_summaries(project.project_id)
        for summary in summaries:
            if _with_flags(summary, {}, now)["flaky"]:
                flaky[str(summary["testId"])] = {"testName": summary.get("testName"), "since": summary.get("flakyAt")}
    return _change(
        project.project_id,
        lambda body: {**body, "enabled": enabled, "tests": {**flaky, **(body.get("tests") or {})}},
    )


def release_tests(caller: Caller, account_name: str, slug: str, test_id: str | None) -> dict[str, Any]:
    """Take one test (``test_id``) or every test out of the quarantine; they are no longer flaky until they flake
    again."""
    project = find_project(caller, account_name, slug, Right.UPDATE)
    found = store.get_quarantine(project.project_id)
    held = dict((found.body.get("tests") or {}) if found else {})
    if test_id is not None and test_id not in held:
        raise NotFound("That test is not in the project's quarantine.")
    released = [test_id] if test_id is not None else list(held)
    body = _change(
        project.project_id,
        lambda body: {**body, "tests": {k: v for k, v in (body.get("tests") or {}).items() if k not in released}},
    )
    if released:
        store.clear_flaky(project.project_id, released)
    return body


def _change(project_id: int, change: Any) -> dict[str, Any]:
    for _ in range(_WRITE_ROUNDS):
        found = store.get_quarantine(project_id)
        body = change(found.body if found else {"enabled": False, "tests": {}})
        if store.save_quarantine(project_id, body, found.version if found else 0):
            return dict(body)
    raise Conflict("The project's quarantine changed meanwhile; try again.")
