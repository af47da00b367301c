"""The container executor's part while a job's tools are installed (executors/containers.py): it renews the job's
lease, as the runner does later, and learns there of a cancel or a lost lease."""

from __future__ import annotations

from unittest.mock import create_autospec

from chalicelib.executors import containers
from chalicelib.runner.protocol import JobClient, ProtocolError, TokenRevoked


def lease_answering(*answers: object) -> tuple[containers._Lease, JobClient]:
    """A lease renewed at every look (no wait between renewals), its renewals answered in turn."""
    client = create_autospec(JobClient, instance=True)
    client.heartbeat.side_effect = list(answers)
    return containers._Lease(client, "job1", 0.0), client


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
    lease = containers._Lease(client, "job1", 3600.0)

    assert [lease.ended() for _ in range(50)] == [False] * 50
    assert client.heartbeat.call_count == 0
