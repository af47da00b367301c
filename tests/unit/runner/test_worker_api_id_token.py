"""The ID tokens a job asks the Build Worker API for: only of the service's own route, with the token the service
minted, never from a URL the job's variables name."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from chalicelib.runner.protocol import JobClient, Ticket
from chalicelib.runner.run import Run
from chalicelib.runner.worker_api import WorkerApi
from chalicelib.runner.worker_api_id_token import is_id_token_request
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


def test_the_id_token_route_is_the_one_below_the_jobs_own_path_in_any_case() -> None:
    assert is_id_token_request("/s3cret/api/id-token?api-version=1&audience=x")
    assert is_id_token_request("//s3cret/API/Id-Token")
    assert not is_id_token_request("/api/id-token?api-version=1")  # no path segment of the job's own before it
    assert not is_id_token_request("/s3cret/api/id-token/more")
