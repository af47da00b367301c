"""What keeping the local stack's state on disk costs: at the start, per read, per write, and at a snapshot.

Two ``conveyor local`` stacks, one keeping its state in a folder (as ``make run`` does) and one keeping nothing
(``CONVEYOR_STATE_DIR=none``), each get the same 200 projects; then each answers
``GET /api/projects/{account}/{slug}`` 300 times over a kept-alive connection, and 100
``PUT .../settings/environment-variables`` (each a change, so a snapshot follows a second
later). The reads are timed again while a writer changes a project every 0.2 s, so that snapshots are taken among
them. The keeping stack is then stopped and started again on its folder: its start (to its first answer) against
the start of an empty one.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import requests

from bench import Figure, Section

if TYPE_CHECKING:
    from tests.e2e.test_local_stack import LocalStack

PROJECTS = 200
READS = 300
WRITES = 100
TARGET_READ_RATIO = 2.0  # keeping state must not double a read's latency


def run() -> Section:
    from tests.e2e.test_local_stack import LocalStack  # noqa: F811 (at run time: the tests' stack launcher)

    section = Section("Keeping the local stack's state", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as root:
        state = Path(root) / "state"
        for name, folder in (("kept", str(state)), ("none", "none")):
            started = time.perf_counter()
            stack = LocalStack.start(Path(root) / name, CONVEYOR_STATE_DIR=folder).wait_until_ready()
            start_seconds = time.perf_counter() - started
            try:
                results[name] = {"start": start_seconds, **_measure(stack)}
            finally:
                stopping = time.perf_counter()
                stack.stop()
            results[name]["stop"] = time.perf_counter() - stopping
        snapshot_bytes = (state / "emulator.pickle").stat().st_size
        started = time.perf_counter()
        restarted = LocalStack.start(Path(root) / "again", CONVEYOR_STATE_DIR=str(state)).wait_until_ready()
        restart_seconds = time.perf_counter() - started
        restored = "(restored)" in restarted.stdout
        restarted.stop()
    kept, none = results["kept"], results["none"]
    ratio = kept["read"] / none["read"]
    section.figures += [
        Figure("start, empty, keeping nothing", f"{none['start']:.2f} s"),
        Figure("start, empty, keeping state", f"{kept['start']:.2f} s"),
        Figure(
            f"start, restoring {PROJECTS} projects ({snapshot_bytes / 1e6:.1f} MB snapshot)", f"{restart_seconds:.2f} s"
        ),
        Figure("restart restored the state", "yes" if restored else "no", "yes", restored),
        Figure("read, keeping nothing (median)", f"{none['read']:.1f} ms"),
        Figure("read, keeping state (median)", f"{kept['read']:.1f} ms"),
        Figure(
            "read, keeping state / keeping nothing",
            f"{ratio:.2f}x",
            f"≤ {TARGET_READ_RATIO}x",
            ratio <= TARGET_READ_RATIO,
        ),
        Figure("read among snapshots, keeping nothing (median / p99)", f"{none['busy']:.1f} / {none['busy99']:.1f} ms"),
        Figure("read among snapshots, keeping state (median / p99)", f"{kept['busy']:.1f} / {kept['busy99']:.1f} ms"),
        Figure("write, keeping nothing (median)", f"{none['write']:.1f} ms"),
        Figure("write, keeping state (median)", f"{kept['write']:.1f} ms"),
        Figure("stop, keeping state (its last snapshot)", f"{kept['stop']:.2f} s"),
    ]
    return section


def _measure(stack: LocalStack) -> dict[str, float]:
    base_url, key = stack.base_url, stack.key
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {key}"
    slugs = [
        api.post(
            f"{base_url}/api/projects", json={"repositoryProvider": "gitHub", "repositoryName": f"octo/p{index}"}
        ).json()["slug"]
        for index in range(PROJECTS)
    ]
    read_url = f"{base_url}/api/projects/local/{slugs[0]}"
    time.sleep(2)  # the snapshot of the projects is written before the reads
    read = _median(lambda: api.get(read_url), READS)
    variables_url = f"{base_url}/api/projects/local/{slugs[1]}/settings/environment-variables"
    write = _median(
        lambda: api.put(
            variables_url, json=[{"name": "N", "value": {"isEncrypted": False, "value": str(time.time())}}]
        ),
        WRITES,
    )

    stop = threading.Event()
    writer = requests.Session()
    writer.headers["Authorization"] = f"Bearer {key}"

    def change() -> None:
        while not stop.wait(0.2):
            writer.put(
                variables_url, json=[{"name": "N", "value": {"isEncrypted": False, "value": str(time.time())}}]
            ).raise_for_status()

    thread = threading.Thread(target=change)
    thread.start()
    try:
        busy = _times(lambda: api.get(read_url), READS * 2)
    finally:
        stop.set()
        thread.join()
    return {
        "read": read,
        "write": write,
        "busy": statistics.median(busy),
        "busy99": statistics.quantiles(busy, n=100)[98],
    }


def _times(call: Callable[[], requests.Response], count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        reply = call()
        times.append((time.perf_counter() - started) * 1000)
        reply.raise_for_status()
    return times


def _median(call: Callable[[], requests.Response], count: int) -> float:
    return statistics.median(_times(call, count))
