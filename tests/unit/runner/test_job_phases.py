"""The quarantine a failed test_script asks the service about: the job goes on (or ends green) only when every test
that failed is quarantined, and the log says which; a service that cannot answer leaves the failure standing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from chalicelib.runner.job_phases import quarantined
from chalicelib.runner.protocol import JobClient, Ticket
from chalicelib.runner.run import Run
from tests.unit.runner.runs import Log, new_run


class _Quarantine(BaseHTTPRequestHandler):
    """The service's job protocol on loopback: its quarantine answers ``status`` and ``names``."""

    status = 200
    names: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's names)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"quarantined": self.names} if self.status == 200 else {"message": "down"}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return


@pytest.fixture
def log() -> Log:
    return Log()


@pytest.fixture
def run(tmp_path: Path, log: Log) -> Iterator[Run]:
    attempt = new_run(tmp_path, log, {"jobId": "job-1"})  # type: ignore[typeddict-item]
    yield attempt
    attempt.session.close()


def _asked(run: Run, status: int, names: list[str], at_end: bool = False) -> bool:
    handler = type("Handler", (_Quarantine,), {"status": status, "names": names})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    run.client = JobClient(Ticket(f"http://127.0.0.1:{server.server_address[1]}", "job-1", "t0ken"))
    try:
        return quarantined(run, at_end=at_end)
    finally:
        server.shutdown()
        server.server_close()


def test_failures_all_quarantined_let_the_job_go_on_and_the_log_names_them(run: Run, log: Log) -> None:
    assert _asked(run, 200, ["flaky_one", "flaky_two"]) is True
    run.log.flush()

    assert log.lines()[-1] == (
        "Quarantined flaky tests failed: flaky_one, flaky_two. They do not fail the job: the job goes on."
    )


def test_at_the_jobs_end_quarantined_failures_end_it_as_a_success(run: Run, log: Log) -> None:
    assert _asked(run, 200, ["flaky"], at_end=True) is True
    run.log.flush()

    assert "the job ends as a success (its later phases did not run)" in log.lines()[-1]


@pytest.mark.parametrize("status", [200, 500])
def test_a_failure_stands_when_a_test_is_not_quarantined_or_the_service_cannot_say(
    run: Run, log: Log, status: int
) -> None:
    assert _asked(run, status, []) is False
    run.log.flush()

    assert not any("Quarantined" in line for line in log.lines())
