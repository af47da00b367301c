"""A container job's runner lives outside the container's limits (its sandbox, beside the container): a job cannot
use it to hold memory past its own limit, nor keep another job's disk from being freed. Played as an attacker would,
with bounded means: 40 connections of 8 MB at most, 128 MB of memory and 96 MB of disk per job.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.executors import containers
from chalicelib.local.pump import SqsPump
from tests.builds import appveyor_yml
from tests.functional.conftest import running_pump
from tests.functional.test_sandbox import host_processes_with

REFUSAL = containers.refusal()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
MEMORY_MB = 128

# Connections to the job's Build Worker API, each sending all of a big body but its last byte, then holding it.
HOLD_BODIES = r"""
import os, socket, time, urllib.parse
url = urllib.parse.urlparse(os.environ["APPVEYOR_API_URL"])
held = []
bodies = [("api/tests/batch", 8 * 1024 * 1024 - 1)] * 24 + [("api/testresults/junit/x", 5 * 1024 * 1024)] * 16
for route, length in bodies:
    client = socket.create_connection(("127.0.0.1", url.port))
    client.settimeout(0.5)  # a runner that does not read leaves the rest to the socket's buffers
    held.append(client)
    try:
        client.sendall(f"POST {url.path}{route} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode())
        client.sendall(b"x" * (length - 1))
    except OSError:
        pass
print("HOLDING", flush=True)
time.sleep(4)
"""


@pytest.fixture(scope="module")
def pump(fresh_resources: None, api_url: str) -> Iterator[SqsPump]:
    """The queue handlers with containers on, each job limited to 128 MB of memory, half a CPU and 96 MB of disk."""
    limits = {"CONVEYOR_JOB_MEMORY_MB": str(MEMORY_MB), "CONVEYOR_JOB_DISK_MB": "96"}
    with running_pump(api_url, CONVEYOR_CONTAINERS="auto", CONVEYOR_JOB_CPUS="0.5", **limits) as running:
        yield running


def _runners_peak_rss_mb() -> int:
    """The largest resident memory of any job's runner now (the sandbox's own processes aside)."""
    largest = 0
    for pid in host_processes_with("chalicelib.runner"):
        try:
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if b"unshare" in arguments or b"setpriv" in arguments:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                largest = max(largest, int(line.split()[1]) // 1024)
    return largest


def test_a_job_cannot_hold_its_data_in_its_runner_past_its_memory_limit(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {"hold.py": HOLD_BODIES, "appveyor.yml": appveyor_yml("build_script:", "  - python3 hold.py", "  - echo DONE")}
    )
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            peak[0] = max(peak[0], _runners_peak_rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    build = project.run()
    stop.set()
    sampler.join()
    log = project.log(build["jobs"][0]["jobId"])

    assert build["status"] == "success", log
    assert "HOLDING" in log, log
    assert 0 < peak[0] < 200, f"the runner held {peak[0]} MB for a job limited to {MEMORY_MB} MB"  # was 790 MB
