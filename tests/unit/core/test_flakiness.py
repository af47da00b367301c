"""When a test is flaky, and what its summary says (core/flakiness.py), without IO."""

from __future__ import annotations

from chalicelib.core import flakiness
from chalicelib.core.flakiness import FLAKY_DAYS, RECENT_RUNS, Run, TestState

DAY = 86400


def run(at: int, outcome: str, commit: str = "c1", duration: int | None = 10, attempt: int = 1) -> Run:
    return Run(at, outcome, duration, commit, "main", "job", 1, "1.0.1", "job1", attempt)


def flaky(state: TestState, now: int) -> bool:
    summary = flakiness.summary(state, "t")
    return flakiness.is_flaky(summary["flakyAt"], summary["lastFailedAt"], summary["passStreak"], now)


def test_failing_then_passing_on_the_same_commit_is_flaky() -> None:
    state = TestState("t", None, None)
    flakiness.record(state, run(100, "Failed"))
    flakiness.record(state, run(200, "Passed", attempt=2))

    assert flaky(state, 300)


def test_failing_on_one_commit_and_passing_on_the_next_is_not_flaky() -> None:
    state = TestState("t", None, None)
    flakiness.record(state, run(100, "Failed", "c1"))
    flakiness.record(state, run(200, "Passed", "c2"))

    assert not flaky(state, 300)


def test_skipped_runs_neither_flake_nor_break_a_streak() -> None:
    state = TestState("t", None, None)
    flakiness.record(state, run(100, "Skipped"))
    flakiness.record(state, run(200, "Passed"))
    flakiness.record(state, run(300, "Skipped"))

    assert not flaky(state, 400)
    assert flakiness.pass_streak(state) == 1


def test_a_flaky_test_stays_flaky_until_its_last_100_runs_passed() -> None:
    state = TestState("t", None, None)
    flakiness.record(state, run(100, "Failed"))
    flakiness.record(state, run(101, "Passed"))
    for index in range(RECENT_RUNS - 2):
        flakiness.record(state, run(200 + index, "Passed", f"n{index}"))
    assert flaky(state, 1000)

    flakiness.record(state, run(900, "Passed", "last"))

    assert not flaky(state, 1000)


def test_a_flaky_test_is_no_longer_flaky_after_7_days_without_a_failure() -> None:
    state = TestState("t", None, None)
    flakiness.record(state, run(100, "Failed"))
    flakiness.record(state, run(200, "Passed"))

    assert flaky(state, 200 + FLAKY_DAYS * DAY - 1)
    assert not flaky(state, 200 + FLAKY_DAYS * DAY)


def test_a_failure_within_the_7_days_keeps_it_flaky() -> None:
    state = TestState("t", None, None)
    flakiness.record(state, run(100, "Failed"))
    flakiness.record(state, run(200, "Passed"))
    flakiness.record(state, run(5 * DAY, "Failed", "c2"))

    assert flaky(state, 200 + FLAKY_DAYS * DAY + 1)


def test_the_summary_keeps_the_last_100_runs_median_and_p95() -> None:
    state = TestState("t", "JUnit", "f.py")
    for index in range(150):
        flakiness.record(state, run(index, "Failed" if index % 10 == 0 else "Passed", f"c{index}", duration=index))

    summary = flakiness.summary(state, "t")

    assert (summary["runs"], summary["failures"]) == (150, 15)
    assert len(summary["recentOutcomes"]) == RECENT_RUNS
    assert (summary["medianMilliseconds"], summary["p95Milliseconds"]) == (99, 144)
    assert summary["failureRate"] == 0.1
    assert summary["lastFailure"]["at"] == 140
    assert len(state.commits) == flakiness.RECENT_COMMITS
