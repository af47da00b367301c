"""A project's tests, per-test history and quarantine (issue 38), kept so that every read is one or two calls.

Under ``p#{projectId}``: ``q`` (the quarantine), then ``s#{testId}`` (each test's summary, small), then
``w#{testId}`` (each test's working state, its last 100 runs). The range ``q`` .. ``s$`` is the quarantine and
every summary: the tests list is one Query (a page per 1 MB: some 1,500 tests of 100 runs each). Under
``t#{projectId}#{testId}``: one item per run, newest last by its sort key ``{finished}#{jobId}#{attempt}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pynamodb.exceptions import TransactWriteError

from chalicelib.store.models import TestHistoryModel
from chalicelib.store.transactions import _connection, still_at

QUARANTINE = "q"
SUMMARY, WORKING = "s#", "w#"
RUN_DAYS = 180  # a run's item is kept this long; summaries and working states as long as the project
TESTS_PER_TRANSACTION = 50  # each a summary and a working item: DynamoDB's 100 items per transaction
MAX_RUNS_PER_PAGE = 100


@dataclass(frozen=True)
class Stored:
    """A working state or the quarantine as read: its body, and the version its write is conditioned on."""

    body: dict[str, Any]
    version: int


def _project(project_id: int) -> str:
    return f"p#{project_id}"


def _runs(project_id: int, test_id: str) -> str:
    return f"t#{project_id}#{test_id}"


def quarantine_and_summaries(project_id: int) -> tuple[Stored | None, list[dict[str, Any]]]:
    """The project's quarantine (None: never set) and every test's summary, by test id, in one Query."""
    quarantine: Stored | None = None
    summaries = []
    for model in TestHistoryModel.query(_project(project_id), TestHistoryModel.item.between(QUARANTINE, "s$")):
        if model.item == QUARANTINE:
            quarantine = Stored(dict(model.body), int(model.version or 0))
        else:
            summaries.append(dict(model.body))
    return quarantine, summaries


def get_quarantine(project_id: int) -> Stored | None:
    """The project's quarantine: whether it is on, and its tests (None: never set)."""
    try:
        model = TestHistoryModel.get(_project(project_id), QUARANTINE, consistent_read=True)
    except TestHistoryModel.DoesNotExist:
        return None
    return Stored(dict(model.body), int(model.version or 0))


def save_quarantine(project_id: int, body: dict[str, Any], read_version: int) -> bool:
    """Write the quarantine if it is still at the version read; False when another write came first."""
    model = TestHistoryModel(_project(project_id), QUARANTINE, body=body, version=read_version + 1)
    from pynamodb.exceptions import PutError

    try:
        model.save(condition=still_at(TestHistoryModel.version, read_version))
    except PutError as error:
        if error.cause_response_code == "ConditionalCheckFailedException":
            return False
        raise
    return True


def get_test_summary(project_id: int, test_id: str) -> dict[str, Any] | None:
    """One test's summary (None: the project has no such test)."""
    try:
        return dict(TestHistoryModel.get(_project(project_id), SUMMARY + test_id).body)
    except TestHistoryModel.DoesNotExist:
        return None


def list_test_runs(
    project_id: int, test_id: str, before: str | None, limit: int = MAX_RUNS_PER_PAGE
) -> tuple[list[dict[str, Any]], str | None]:
    """One test's runs, newest first, before the sort key ``before`` (a page's ``next``); and the next page's key."""
    condition = TestHistoryModel.item < before if before else None
    query = TestHistoryModel.query(
        _runs(project_id, test_id), condition, scan_index_forward=False, limit=limit, page_size=limit
    )
    found = list(query)
    last = query.last_evaluated_key
    return [dict(model.body) for model in found], (str(last["item"]["S"]) if last and len(found) == limit else None)


def get_working_states(project_id: int, test_ids: list[str]) -> dict[str, Stored]:
    """The working states of these tests that exist, by test id (consistent: they are written next)."""
    found: dict[str, Stored] = {}
    keys = [(_project(project_id), WORKING + test_id) for test_id in dict.fromkeys(test_ids)]
    for model in TestHistoryModel.batch_get(keys, consistent_read=True):
        found[model.item.removeprefix(WORKING)] = Stored(dict(model.body), int(model.version or 0))
    return found


def save_working_states(project_id: int, updates: list[tuple[str, dict[str, Any], dict[str, Any], int]]) -> list[str]:
    """Write each test's working state and summary (test id, state, summary, version read), a transaction per 50
    tests, each conditioned on the working state's version; the ids of the tests of a transaction that lost a race
    (another job of the project wrote one of them meanwhile), to be read and written again."""
    from pynamodb.transactions import TransactWrite

    lost: list[str] = []
    for start in range(0, len(updates), TESTS_PER_TRANSACTION):
        chunk = updates[start : start + TESTS_PER_TRANSACTION]
        try:
            with TransactWrite(connection=_connection()) as transaction:
                for test_id, state, summary, version in chunk:
                    working = TestHistoryModel(_project(project_id), WORKING + test_id, body=state, version=version + 1)
                    transaction.save(working, condition=still_at(TestHistoryModel.version, version))
                    transaction.save(TestHistoryModel(_project(project_id), SUMMARY + test_id, body=summary))
        except TransactWriteError as error:
            if error.cause_response_code not in ("TransactionCanceledException", "TransactionConflictException"):
                raise
            lost.extend(test_id for test_id, *_ in chunk)
    return lost


def add_test_runs(project_id: int, runs: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Store runs (test id, sort key, run): a redelivered job's runs have the same keys and replace themselves."""
    expires = timedelta(days=RUN_DAYS)
    with TestHistoryModel.batch_write() as batch:
        for test_id, sort_key, body in runs:
            batch.save(TestHistoryModel(_runs(project_id, test_id), sort_key, body=body, expires=expires))


def clear_flaky(project_id: int, test_ids: list[str]) -> None:
    """Forget that these tests flaked (their quarantine was cleared by hand): each working state and summary
    loses its flake, under its version (a state written meanwhile is read again)."""
    for _ in range(3):
        states = get_working_states(project_id, test_ids)
        summaries = {test_id: get_test_summary(project_id, test_id) for test_id in states}
        updates = []
        for test_id, stored in states.items():
            summary = summaries.get(test_id) or {}
            updates.append(
                (test_id, {**stored.body, "flakyAt": None, "commits": {}}, {**summary, "flakyAt": None}, stored.version)
            )
        test_ids = save_working_states(project_id, updates)
        if not test_ids:
            return
