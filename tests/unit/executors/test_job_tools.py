"""The container executor's part while a job's tools are installed (executors/job_tools.py): it renews the job's
lease, as the runner does later, and learns there of a cancel or a lost lease."""

from __future__ import annotations

import time
from pathlib import Path
from unittest.mock import create_autospec

import pytest

from chalicelib.executors import job_tools
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.protocol import JobClient, ProtocolError, TokenRevoked


def lease_answering(*answers: object) -> tuple[job_tools.Lease, JobClient]:
    """A lease renewed at every look (no wait between renewals), its renewals answered in turn."""
    client = create_autospec(JobClient, instance=True)
    client.heartbeat.side_effect = list(answers)
    return job_tools.Lease(client, "job1", 0.0), client


def test_the_lease_is_renewed_while_tools_install_and_a_cancel_ends_the_job_saying_who() -> None:
    lease, client = lease_answering(("running", None), ProtocolError("a blip"), ("cancelling", "Cancelled by ann."))

    looks = [lease.ended() for _ in range(3)]

    assert looks == [False, False, True]  # a failed renewal is no end: the next one is tried
    assert lease.cancel == "Cancelled by ann."
    assert client.heartbeat.call_count == 3


def test_a_token_that_no_longer_works_ends_the_job_with_nothing_to_say() -> None:
    lease, _ = lease_answering(TokenRevoked("The job has ended: its token no longer works.", 401))

    assert lease.ended() is True
    assert lease.cancel is None  # lost, not cancelled: the service ends it, the executor says nothing


def test_renewals_wait_their_interval_between_looks() -> None:
    client = create_autospec(JobClient, instance=True)
    lease = job_tools.Lease(client, "job1", 3600.0)

    assert [lease.ended() for _ in range(50)] == [False] * 50
    assert client.heartbeat.call_count == 0


def test_a_job_whose_token_no_longer_works_when_its_tools_are_looked_up_never_gets_a_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(tmp_path / "tools"))
    client = create_autospec(JobClient, instance=True)
    client.spec.side_effect = TokenRevoked("The job's token no longer works: the job has ended.", 404)
    monkeypatch.setattr(job_tools, "JobClient", lambda ticket: client)

    with pytest.raises(job_tools.Ended) as ended:  # run() then returns before any container is made
        job_tools.fill(Ticket("http://127.0.0.1:9", "job1", "t0ken"), time.monotonic() + 60)

    assert ended.value.cancel is None  # its lease was lost (or it ended elsewhere): the service ends it


def test_a_spec_the_service_cannot_answer_now_leaves_the_tools_to_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE", str(tmp_path / "tools"))
    client = create_autospec(JobClient, instance=True)
    client.spec.side_effect = ProtocolError("GET /: HTTP 503", 503)
    monkeypatch.setattr(job_tools, "JobClient", lambda ticket: client)

    filled = job_tools.fill(Ticket("http://127.0.0.1:9", "job1", "t0ken"), time.monotonic() + 60)

    assert (filled.folders, filled.notes) == ({}, [])  # its runner asks again, and says why if it cannot
