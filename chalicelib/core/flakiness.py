"""A test's history in brief, and when it is flaky: pure functions over what store/tests_history.py keeps.

A test is **flaky** when it both passed and failed on the same commit (a re-run of a job included): the definition
Buildkite, CircleCI and Mergify share. It stays flaky until it has passed on every run of its last 100 runs, or on
every run of the last 7 days (and 7 days have gone by since it flaked).

Each test keeps a working state (its last 100 runs, the outcomes seen on its recent commits) from which its
summary, the small item a project's tests list reads, is derived whenever a job reports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

RECENT_RUNS = 100
RECENT_COMMITS = 50  # commits whose outcomes are kept to find a flake (re-runs come soon after their first run)
FLAKY_DAYS = 7
PASSED, FAILED, OTHER = "P", "F", "S"
_OUTCOME_CODES = {"Passed": PASSED, "Failed": FAILED}


def outcome_code(outcome: str | None) -> str:
    """P for Passed, F for Failed, S for anything else (skipped, ignored, inconclusive, not run)."""
    return _OUTCOME_CODES.get(str(outcome), OTHER)


@dataclass(frozen=True)
class Run:
    """One run of a test: a job's attempt reported it."""

    at: int  # epoch seconds: when the job's attempt finished
    outcome: str  # the Build Worker API's outcome
    duration: int | None  # milliseconds
    commit: str
    branch: str | None
    job_name: str
    build_id: int
    build_version: str
    job_id: str
    attempt: int
    error: str | None = None  # its error message, cut short
    sent_from_outside: bool = False  # a key sent it into the job, from outside the build (never the build's word)


@dataclass
class TestState:
    """What is kept of a test to derive its summary: its identity, totals, last 100 runs, recent commits' outcomes."""

    __test__ = False  # not a pytest class, whatever its name

    name: str
    framework: str | None
    file_name: str | None
    runs_total: int = 0
    failures_total: int = 0
    recent: list[list[Any]] = field(default_factory=list)  # [at, code, duration], oldest first, at most 100
    commits: dict[str, str] = field(default_factory=dict)  # commit -> codes seen ("P", "F", "PF"), oldest first
    flaky_at: int | None = None  # when it last flaked (passed and failed on one commit); None: never, or cleared
    last_failed_at: int | None = None
    last_failure: dict[str, Any] | None = None  # the run, as run_json shapes it


def record(state: TestState, run: Run) -> TestState:
    """``state`` with ``run`` added (runs arrive about in time order; each job's attempt adds one)."""
    code = outcome_code(run.outcome)
    state.runs_total += 1
    state.recent = [*state.recent, [run.at, code, run.duration]][-RECENT_RUNS:]
    if code == FAILED:
        state.failures_total += 1
        state.last_failed_at = run.at
        state.last_failure = run_json(run)
    if code in (PASSED, FAILED):
        seen = state.commits.pop(run.commit, "")
        seen = "".join(sorted(set(seen + code), reverse=True))  # "P", "F" or "PF"
        state.commits = dict(list(state.commits.items())[-(RECENT_COMMITS - 1) :]) | {run.commit: seen}
        if seen == PASSED + FAILED:
            state.flaky_at = run.at
    return state


def is_flaky(flaky_at: int | None, last_failed_at: int | None, pass_streak: int, now: int) -> bool:
    """Whether a test that last flaked at ``flaky_at`` is still flaky: not once its last 100 runs all passed, nor
    once 7 days have passed since it flaked with no failure among them."""
    if flaky_at is None:
        return False
    if pass_streak >= RECENT_RUNS:
        return False
    quiet_since = max(flaky_at, last_failed_at or 0)
    return now - quiet_since < FLAKY_DAYS * 86400


def pass_streak(state: TestState) -> int:
    """How many of its last runs, newest back, passed (skipped runs neither count nor break it)."""
    streak = 0
    for _, code, _ in reversed(state.recent):
        if code == FAILED:
            break
        streak += code == PASSED
    return streak


def summary(state: TestState, test_id: str) -> dict[str, Any]:
    """What the project's tests list shows of the test, flakiness as its inputs (``is_flaky`` decides at read)."""
    durations = sorted(duration for _, _, duration in state.recent if isinstance(duration, int))
    counted = [code for _, code, _ in state.recent if code in (PASSED, FAILED)]
    return {
        "testId": test_id,
        "testName": state.name,
        "testFramework": state.framework,
        "fileName": state.file_name,
        "runs": state.runs_total,
        "failures": state.failures_total,
        "failureRate": round(counted.count(FAILED) / len(counted), 4) if counted else 0.0,
        "medianMilliseconds": _percentile(durations, 50),
        "p95Milliseconds": _percentile(durations, 95),
        "lastFailure": state.last_failure,
        "recentOutcomes": "".join(code for _, code, _ in state.recent),
        "flakyAt": state.flaky_at,
        "lastFailedAt": state.last_failed_at,
        "passStreak": pass_streak(state),
    }


def _percentile(ordered: list[int], percent: int) -> int | None:
    """The nearest-rank percentile of sorted values (None for none)."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def run_json(run: Run) -> dict[str, Any]:
    return {
        "at": run.at,
        "outcome": run.outcome,
        "durationMilliseconds": run.duration,
        "commitId": run.commit,
        "branch": run.branch,
        "jobName": run.job_name,
        "buildId": run.build_id,
        "buildVersion": run.build_version,
        "jobId": run.job_id,
        "attempt": run.attempt,
        "errorMessage": run.error,
        "sentFromOutside": run.sent_from_outside,
    }


def state_json(state: TestState) -> dict[str, Any]:
    return {
        "name": state.name,
        "framework": state.framework,
        "fileName": state.file_name,
        "runsTotal": state.runs_total,
        "failuresTotal": state.failures_total,
        "recent": state.recent,
        "commits": state.commits,
        "flakyAt": state.flaky_at,
        "lastFailedAt": state.last_failed_at,
        "lastFailure": state.last_failure,
    }


def state_of(body: dict[str, Any]) -> TestState:
    return TestState(
        name=str(body.get("name") or ""),
        framework=body.get("framework"),
        file_name=body.get("fileName"),
        runs_total=int(body.get("runsTotal") or 0),
        failures_total=int(body.get("failuresTotal") or 0),
        recent=list(body.get("recent") or []),
        commits=dict(body.get("commits") or {}),
        flaky_at=body.get("flakyAt"),
        last_failed_at=body.get("lastFailedAt"),
        last_failure=body.get("lastFailure"),
    )
