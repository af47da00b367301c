"""Job transitions are exactly the table; a build's status follows from its jobs' statuses and allowed failures."""

from __future__ import annotations

import itertools

import pytest

from chalicelib.core.status import Event, JobState, Status, build_status, counts_as_failure, next_status

# The whole transition table, written out: (status, event) -> status; any pair missing here does not apply.
TRANSITIONS = {
    (Status.QUEUED, Event.CLAIM): Status.RUNNING,
    (Status.QUEUED, Event.FAIL): Status.FAILED,
    (Status.QUEUED, Event.CANCEL): Status.CANCELLED,
    (Status.STARTING, Event.CLAIM): Status.RUNNING,
    (Status.STARTING, Event.FAIL): Status.FAILED,
    (Status.STARTING, Event.CANCEL): Status.CANCELLING,
    (Status.RUNNING, Event.SUCCEED): Status.SUCCESS,
    (Status.RUNNING, Event.FAIL): Status.FAILED,
    (Status.RUNNING, Event.CANCEL): Status.CANCELLING,
    (Status.CANCELLING, Event.STOPPED): Status.CANCELLED,
    (Status.CANCELLING, Event.SUCCEED): Status.CANCELLED,
    (Status.CANCELLING, Event.FAIL): Status.CANCELLED,
    (Status.FAILED, Event.REQUEUE): Status.QUEUED,
    (Status.CANCELLED, Event.REQUEUE): Status.QUEUED,
}

# A two-job build's status for every pair of job statuses (no failure allowed): row = one job, column = the other.
TWO_JOB_BUILDS = """
            queued     starting   running    cancelling success    failed     cancelled
queued      queued     running    running    running    running    running    running
starting    running    running    running    running    running    running    running
running     running    running    running    running    running    running    running
cancelling  running    running    running    cancelling cancelling cancelling cancelling
success     running    running    running    cancelling success    failed     cancelled
failed      running    running    running    cancelling failed     failed     failed
cancelled   running    running    running    cancelling cancelled  failed     cancelled
"""


def two_job_cases() -> list[tuple[Status, Status, Status]]:
    header, *rows = TWO_JOB_BUILDS.split("\n")[1:-1]
    columns = [Status(word) for word in header.split()]
    cases = []
    for line in rows:
        first, *results = line.split()
        cases += [(Status(first), second, Status(result)) for second, result in zip(columns, results, strict=True)]
    return cases


def job(status: Status, *, allow_failure: bool = False) -> JobState:
    return JobState(status, allow_failure)


@pytest.mark.parametrize(("status", "event"), itertools.product(Status, Event))
def test_every_status_and_event_follow_the_transition_table(status: Status, event: Event) -> None:
    assert next_status(status, event) == TRANSITIONS.get((status, event))


def test_the_table_covers_every_status_and_event() -> None:
    assert len(list(itertools.product(Status, Event))) == 42
    assert {status for status, _ in TRANSITIONS} == set(Status) - {Status.SUCCESS}


def test_claim_of_queued_job_runs_it() -> None:
    assert next_status(Status.QUEUED, Event.CLAIM) is Status.RUNNING


def test_second_claim_of_a_job_is_a_lost_race() -> None:
    assert next_status(Status.RUNNING, Event.CLAIM) is None


def test_running_job_succeeds_or_fails() -> None:
    assert next_status(Status.RUNNING, Event.SUCCEED) is Status.SUCCESS
    assert next_status(Status.RUNNING, Event.FAIL) is Status.FAILED


def test_cancel_of_queued_job_cancels_it_at_once() -> None:
    assert next_status(Status.QUEUED, Event.CANCEL) is Status.CANCELLED


def test_cancel_of_running_job_waits_for_its_runner_to_stop() -> None:
    assert next_status(Status.RUNNING, Event.CANCEL) is Status.CANCELLING
    assert next_status(Status.STARTING, Event.CANCEL) is Status.CANCELLING
    assert next_status(Status.CANCELLING, Event.STOPPED) is Status.CANCELLED


def test_cancel_wins_over_a_job_that_finishes_while_cancelling() -> None:
    assert next_status(Status.CANCELLING, Event.SUCCEED) is Status.CANCELLED
    assert next_status(Status.CANCELLING, Event.FAIL) is Status.CANCELLED


def test_second_cancel_is_a_duplicate() -> None:
    assert next_status(Status.CANCELLING, Event.CANCEL) is None
    assert next_status(Status.CANCELLED, Event.CANCEL) is None


def test_job_that_cannot_start_fails_from_the_queue() -> None:
    assert next_status(Status.QUEUED, Event.FAIL) is Status.FAILED


def test_finished_job_ignores_everything_but_a_requeue() -> None:
    for status, event in itertools.product([Status.SUCCESS, Status.FAILED, Status.CANCELLED], Event):
        if event is not Event.REQUEUE:
            assert next_status(status, event) is None


def test_rerun_incomplete_requeues_failed_and_cancelled_jobs_only() -> None:
    assert next_status(Status.FAILED, Event.REQUEUE) is Status.QUEUED
    assert next_status(Status.CANCELLED, Event.REQUEUE) is Status.QUEUED
    assert next_status(Status.SUCCESS, Event.REQUEUE) is None
    assert next_status(Status.RUNNING, Event.REQUEUE) is None


@pytest.mark.parametrize("status", Status)
def test_finished_statuses_are_success_failed_and_cancelled(status: Status) -> None:
    assert status.finished == (status in {Status.SUCCESS, Status.FAILED, Status.CANCELLED})


def test_statuses_read_as_in_the_api() -> None:
    assert [status.value for status in Status] == [
        "queued",
        "starting",
        "running",
        "cancelling",
        "success",
        "failed",
        "cancelled",
    ]


def test_build_without_jobs_is_queued() -> None:
    assert build_status([]) is Status.QUEUED


@pytest.mark.parametrize("status", Status)
def test_single_job_build_has_its_jobs_status_but_starting_reads_running(status: Status) -> None:
    expected = Status.RUNNING if status is Status.STARTING else status
    assert build_status([job(status)]) is expected


@pytest.mark.parametrize(("first", "second", "expected"), two_job_cases())
def test_two_job_build_status(first: Status, second: Status, expected: Status) -> None:
    assert build_status([job(first), job(second)]) is expected


def test_two_job_table_is_complete_and_the_same_both_ways() -> None:
    cases = two_job_cases()
    results = {(first, second): expected for first, second, expected in cases}
    assert len(cases) == len(results) == len(Status) ** 2
    assert all(results[first, second] is results[second, first] for first, second in results)


def test_build_fails_when_a_job_that_may_not_fail_fails() -> None:
    assert build_status([job(Status.FAILED), job(Status.SUCCESS, allow_failure=True)]) is Status.FAILED


def test_allowed_failure_does_not_fail_the_build() -> None:
    assert build_status([job(Status.FAILED, allow_failure=True), job(Status.SUCCESS)]) is Status.SUCCESS


def test_allowed_failure_beside_a_failure_that_counts_fails_the_build() -> None:
    assert build_status([job(Status.FAILED, allow_failure=True), job(Status.FAILED)]) is Status.FAILED


def test_build_fails_when_every_job_may_fail_and_one_did() -> None:
    jobs = [job(Status.FAILED, allow_failure=True), job(Status.SUCCESS, allow_failure=True)]
    assert build_status(jobs) is Status.FAILED
    assert build_status([job(Status.FAILED, allow_failure=True)]) is Status.FAILED


def test_build_of_jobs_that_may_fail_succeeds_when_none_failed() -> None:
    assert build_status([job(Status.SUCCESS, allow_failure=True)] * 2) is Status.SUCCESS


def test_allowed_failure_beside_a_cancelled_job_leaves_the_build_cancelled() -> None:
    assert build_status([job(Status.FAILED, allow_failure=True), job(Status.CANCELLED)]) is Status.CANCELLED


def test_allowed_failure_does_not_decide_a_build_still_in_progress() -> None:
    assert build_status([job(Status.FAILED), job(Status.RUNNING, allow_failure=True)]) is Status.RUNNING


def test_build_with_some_jobs_done_and_the_rest_queued_is_running() -> None:
    assert build_status([job(Status.SUCCESS), job(Status.QUEUED), job(Status.QUEUED)]) is Status.RUNNING


def test_cancelled_build_is_cancelling_until_its_last_runner_stops() -> None:
    jobs = [job(Status.CANCELLED), job(Status.CANCELLING), job(Status.SUCCESS)]
    assert build_status(jobs) is Status.CANCELLING
    assert build_status([*jobs[:1], job(Status.CANCELLED), *jobs[2:]]) is Status.CANCELLED


@pytest.mark.parametrize(
    ("status", "allow_failure", "expected"),
    [
        *[(status, False, status is Status.FAILED) for status in Status],
        *[(status, True, False) for status in Status],
    ],
)
def test_only_a_failure_that_is_not_allowed_counts(status: Status, allow_failure: bool, expected: bool) -> None:
    assert counts_as_failure(job(status, allow_failure=allow_failure)) is expected
