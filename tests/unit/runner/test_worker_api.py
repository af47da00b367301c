"""The Build Worker API a job's scripts call (``appveyor SetVariable``, ``appveyor exit``...): only at the job's own
URL path, and what it changes the next scripts see. Its calls are handled directly, not over HTTP."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from chalicelib.runner.protocol import JobClient, Ticket
from chalicelib.runner.run import Run
from chalicelib.runner.worker_api import MAX_CONNECTIONS, WorkerApi
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


def _peak_rss_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmHWM")


def _held_bodies(api: WorkerApi, route: str, body_bytes: int, connections: int) -> list[socket.socket]:
    """Connections that each send a request's headers and all of its body but its last byte, and wait."""
    url = urlsplit(api.url)
    held = []
    for _ in range(connections):
        client = socket.create_connection(("127.0.0.1", url.port or 80))
        client.settimeout(0.3)  # a runner that does not read leaves the rest in the socket's buffers
        held.append(client)
        head = f"POST {url.path}{route} HTTP/1.1\r\nHost: x\r\nContent-Length: {body_bytes}\r\n\r\n"
        with contextlib.suppress(OSError):
            client.sendall(head.encode())
            client.sendall(b"x" * (body_bytes - 1))
    return held


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to measure memory")
def test_a_job_cannot_make_its_runner_hold_its_bodies_in_memory(api: WorkerApi) -> None:
    """The runner is outside the job's memory limit: many connections with big bodies held open cost it little."""
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts from now
    before = _peak_rss_mb()

    held = _held_bodies(api, "api/testresults/junit/x", 5 * 1024 * 1024, 16)
    held += _held_bodies(api, "api/tests/batch", 8 * 1024 * 1024 - 1, 8)
    time.sleep(1)
    grown = _peak_rss_mb() - before
    for client in held:
        client.close()

    assert grown < 40, f"the runner took {grown} MB for bodies it was sent"  # was 130 MB, 40 MB a body in flight


def test_connections_past_the_runners_limit_are_turned_away(api: WorkerApi) -> None:
    url = urlsplit(api.url)
    held = [socket.create_connection(("127.0.0.1", url.port or 80)) for _ in range(MAX_CONNECTIONS)]
    time.sleep(0.3)

    extra = socket.create_connection(("127.0.0.1", url.port or 80), timeout=5)
    answer = extra.recv(100)
    extra.close()
    for client in held:
        client.close()

    assert answer.startswith(b"HTTP/1.1 503"), answer


class _Recorder(BaseHTTPRequestHandler):
    """A loopback server: the service's API, or a service of this machine a build must not reach."""

    hits: list[tuple[str, str | None]]
    redirect_to: str | None = None

    def do_GET(self) -> None:  # noqa: N802 (http.server's names)
        self.hits.append((self.path, self.headers.get("Authorization")))
        if self.redirect_to:
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps({"value": f"answer of {self.path}"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return


@contextlib.contextmanager
def _loopback(redirect_to: str | None = None) -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
    hits: list[tuple[str, str | None]] = []
    handler = type("Handler", (_Recorder,), {"hits": hits, "redirect_to": redirect_to})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def _asks_for_an_id_token(run: Run, api: WorkerApi, variables: dict[str, str], id_token: bool) -> list[Any]:
    """What the job's curl of its ACTIONS_ID_TOKEN_REQUEST_URL and its ``appveyor GetIdToken`` get."""
    run.spec = {**run.spec, "jobId": "job-1", "variables": variables, "idToken": id_token}  # type: ignore[typeddict-unknown-key]
    own = urlsplit(api.url).path
    token = variables.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "")
    answers: list[Any] = [api.id_token_request(f"{own}api/id-token?api-version=1&audience=x", f"Bearer {token}")]
    answers.append(api.handle("POST", f"{own}api/build/idtoken", {"audience": "x"}))
    return answers


Hits = list[tuple[str, str | None]]


def _asked_with_servers(
    run: Run, api: WorkerApi, internal_path: str, token: str, id_token: bool
) -> tuple[list[Any], Hits, Hits]:
    """The job asks for an ID token, its variables naming a URL of an internal server and ``token``, the service and
    that server both on loopback: the answers, and what the service and the internal server were asked."""
    with _loopback() as (service, service_hits), _loopback() as (internal, internal_hits):
        run.client = JobClient(Ticket(service, "job-1", "t0ken"))
        variables = {
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{internal}{internal_path}",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": token,
        }
        return _asks_for_an_id_token(run, api, variables, id_token), service_hits, internal_hits


def test_the_runner_never_fetches_an_id_token_url_appveyor_yml_names(run: Run, api: WorkerApi) -> None:
    # appveyor.yml's environment: names them, and the service minted no ID token for the job
    answers, service_hits, internal_hits = _asked_with_servers(run, api, "/internal/secret?x=1", "t", id_token=False)

    assert internal_hits == [] and service_hits == []
    assert [status for status, _ in answers] == [404, 400]
    assert all("no ID tokens" in answer["message"] for _, answer in answers)


def test_an_id_token_is_asked_of_the_services_own_route_whatever_url_the_variables_name(
    run: Run, api: WorkerApi
) -> None:
    answers, service_hits, internal_hits = _asked_with_servers(run, api, "/elsewhere?x=1", "cvyo_r", id_token=True)

    assert internal_hits == []
    assert [path.split("&")[0] for path, _ in service_hits] == ["/api/runner/jobs/job-1/id-token?api-version=1"] * 2
    assert {authorization for _, authorization in service_hits} == {"Bearer cvyo_r"}
    assert answers[0][0] == 200 and answers[1][0] == 200


def test_a_redirect_from_the_id_token_route_is_not_followed(run: Run, api: WorkerApi) -> None:
    with _loopback() as (internal, internal_hits), _loopback(redirect_to=f"{internal}/internal") as (service, _):
        run.client = JobClient(Ticket(service, "job-1", "t0ken"))
        minted = {"ACTIONS_ID_TOKEN_REQUEST_URL": f"{service}/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "cvyo_r"}
        answers = _asks_for_an_id_token(run, api, minted, id_token=True)

    assert internal_hits == []
    assert answers[0][0] == 502 and answers[1][0] == 502


def test_a_containers_id_token_url_is_the_worker_apis_only_when_the_service_minted_it() -> None:
    from chalicelib.runner.job import _container_environment

    forged = {"ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:1/internal", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"}
    spec: Any = {"variables": forged, "idToken": False}
    api_url = "http://localhost:1/s/"

    assert (
        _container_environment(spec, "/f", api_url)["ACTIONS_ID_TOKEN_REQUEST_URL"]
        == forged["ACTIONS_ID_TOKEN_REQUEST_URL"]
    )
    minted = _container_environment({**spec, "idToken": True}, "/f", api_url)
    assert (
        minted["ACTIONS_ID_TOKEN_REQUEST_URL"]
        == minted["CONVEYOR_OIDC_REQUEST_URL"]
        == f"{api_url}api/id-token?api-version=1"
    )


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
