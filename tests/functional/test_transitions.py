"""Every change of a job's status goes through the transition table: one function writes it, and it writes only
what the table says (issue 20). A test fails if a write sets a job's status anywhere else."""

from __future__ import annotations

import ast
import itertools
from datetime import UTC, datetime
from pathlib import Path

import pytest

import chalicelib
from chalicelib.core.jobs import Job, MoveFields
from chalicelib.core.status import Event, Status, next_status
from chalicelib.store import job_moves
from chalicelib.store import jobs as job_store
from chalicelib.store.jobs import job_from_model
from chalicelib.store.models import JobModel

CODE = Path(chalicelib.__file__).parent


def status_writes() -> list[str]:
    """Where the code sets a job item's status: ``JobModel.status.set(...)`` or ``JobModel(..., status=...)``."""
    found = []
    for path in sorted(CODE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            setter = ast.unparse(node.func) == "JobModel.status.set"
            made = ast.unparse(node.func) == "JobModel" and any(keyword.arg == "status" for keyword in node.keywords)
            if setter or made:
                inside = [f.name for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
                found.append(f"{path.relative_to(CODE)}:{inside[-1] if inside else '<module>'}")
    return found


def test_a_job_status_is_written_in_two_places_only_the_transition_and_the_new_queued_job() -> None:
    # _write: the move by the table, written alone (transition) or in its build's transaction (planned_move)
    assert status_writes() == ["store/job_moves.py:_write", "store/jobs.py:job_model"]


def test_a_new_job_in_any_status_but_queued_is_refused() -> None:
    job = Job(
        job_id="j1",
        build_id=1,
        project_id=1,
        account_id=1,
        number=1,
        name="",
        spec={},
        allow_failure=False,
        status=str(Status.RUNNING),
        created=datetime.now(UTC),
    )

    with pytest.raises(ValueError, match="created queued"):
        job_store.job_model(job)


def stored_in(status: Status) -> str:
    job_id = f"job-{status}"
    JobModel(
        job_id,
        build_id=1,
        project_id=1,
        account_id=1,
        number=1,
        name="",
        spec={},
        status=str(status),
        created=datetime.now(UTC),
    ).save()
    return job_id


@pytest.mark.parametrize(("status", "event"), itertools.product(Status, Event), ids=lambda value: str(value))
def test_each_event_moves_a_stored_job_exactly_as_the_table_says(status: Status, event: Event) -> None:
    job_id = stored_in(status)

    job = job_moves.transition(job_id, status, event, MoveFields(lease_expires=2_000_000_000))

    after = JobModel.get(job_id, consistent_read=True)
    moved = Status(job.status) if job is not None else None
    assert moved == next_status(status, event)
    assert after.status == str(moved or status)
    assert job is None or job == job_from_model(after)  # the write returns the job as it left it
    if moved is not None and moved.finished:
        assert after.finished is not None and after.lease_expires is None
    if event is Event.CLAIM and moved is not None:
        assert after.lease_expires == 2_000_000_000


def test_a_move_from_a_status_the_job_has_left_writes_nothing() -> None:
    job_id = stored_in(Status.CANCELLED)

    moved = job_moves.transition(job_id, Status.RUNNING, Event.SUCCEED)  # a runner that lost to a cancel

    assert moved is None and JobModel.get(job_id, consistent_read=True).status == "cancelled"
