"""The Build Worker API's listeners: a job's scripts cannot make the runner hold their bodies in memory, nor open
more connections than it serves."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from chalicelib.runner.run import Run
from chalicelib.runner.worker_api import WorkerApi
from chalicelib.runner.worker_api_server import MAX_CONNECTIONS
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
