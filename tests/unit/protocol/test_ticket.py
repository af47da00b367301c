"""A runner's ticket as the executor hands it over (JSON on standard input, a function's event): read back whole,
and read from an executor that sent no warnings or container. No IO."""

from __future__ import annotations

import json

from chalicelib.protocol.ticket import Ticket


def test_a_ticket_reads_back_as_it_was_written() -> None:
    ticket = Ticket("http://127.0.0.1:8000", "job-1", "cvyj_x", ("a warning",), {"folder": "/tmp/job", "stdin": 5})

    assert Ticket.from_json(ticket.to_json()) == ticket


def test_a_ticket_without_warnings_or_container_runs_its_scripts_beside_the_runner() -> None:
    ticket = Ticket.from_json(json.dumps({"apiUrl": "http://127.0.0.1:8000/", "jobId": "job-1", "token": "cvyj_x"}))

    assert ticket == Ticket("http://127.0.0.1:8000", "job-1", "cvyj_x")
    assert "container" not in json.loads(ticket.to_json())
