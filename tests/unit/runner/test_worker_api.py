"""The Build Worker API a job's scripts call (``appveyor SetVariable``, ``appveyor exit``...): only at the job's own
URL path, and what it changes the next scripts see. Its calls are handled directly, not over HTTP."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

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
