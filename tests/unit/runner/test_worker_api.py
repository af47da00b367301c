"""The Build Worker API a job's scripts call (``appveyor SetVariable``, ``appveyor exit``...): only at the job's own
URL path, and what it changes the next scripts see. Its calls are handled directly, not over HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from chalicelib.runner.protocol import JobClient, Ticket
from chalicelib.runner.run import Run
from chalicelib.runner.worker_api import WorkerApi
from tests.unit.runner.runs import Log, new_run


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    (tmp_path / "build").mkdir()
    attempt = new_run(tmp_path / "build", Log())
    yield attempt
    attempt.session.close()


@pytest.fixture
def api(run: Run) -> Iterator[WorkerApi]:
    with WorkerApi(run) as worker_api:
        yield worker_api


def test_a_variable_set_through_the_api_reaches_the_jobs_next_scripts(run: Run, api: WorkerApi) -> None:
    own = urlsplit(api.url).path

    answer = api.handle("POST", f"{own}api/build/variables", {"name": "RELEASE", "value": "yes"})

    assert answer == (200, None)
    assert run.variables["RELEASE"] == "yes"


def test_a_call_without_the_jobs_own_url_path_is_refused(run: Run, api: WorkerApi) -> None:
    status, answer = api.handle("POST", "/api/build/variables", {"name": "RELEASE", "value": "forged"})

    assert status == 403 and "Use the whole APPVEYOR_API_URL" in answer["message"]
    assert "RELEASE" not in run.variables


def test_a_bad_variable_name_or_an_unknown_operation_is_answered_as_such(run: Run, api: WorkerApi) -> None:
    own = urlsplit(api.url).path

    bad = api.handle("POST", f"{own}api/build/variables", {"name": "NOT-A NAME", "value": "x"})
    unknown = api.handle("DELETE", f"{own}api/build", None)

    assert bad == (400, {"message": "A variable needs a name of letters, digits and underscores."})
    assert unknown[0] == 404


def test_appveyor_exit_asks_the_job_to_skip_to_its_last_phases(run: Run, api: WorkerApi) -> None:
    own = urlsplit(api.url).path

    assert api.handle("POST", f"{own}api/build/exit", {})[0] == 200
    assert run.exit_requested is True


class _Refuser(BaseHTTPRequestHandler):
    """The service's job protocol refusing every report: past the job's cap of messages and tests."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's names)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"message": "A job keeps at most 100,000 messages and tests."}).encode()
        self.send_response(409)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return


def test_a_report_the_service_refuses_past_a_cap_is_that_refusal_to_the_script_not_a_502(
    run: Run, api: WorkerApi
) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Refuser)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    run.client = JobClient(Ticket(f"http://127.0.0.1:{server.server_address[1]}", "job-1", "t0ken"))
    own = urlsplit(api.url).path
    try:
        message = api.handle("POST", f"{own}api/build/messages", {"message": "m", "category": "information"})
        test = api.handle("POST", f"{own}api/tests", {"testName": "t", "outcome": "Passed"})
    finally:
        server.shutdown()
        server.server_close()

    assert [message[0], test[0]] == [409, 409]
    assert "at most 100,000 messages and tests" in message[1]["message"]
