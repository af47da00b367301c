"""Throughput of the local stack: 50 one-line builds started at once, through ``conveyor local`` (``make run``).

Eight clients start the builds of one project (its repository on a local git server) as fast as the API takes
them; the stack's pump runs them with its default 4 workers, each job's runner in a sandbox of its own.
Queue-to-running is each job's ``started`` less its ``created``, as the API reports them. These figures have no
target: they are here so later changes can be compared.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import requests

from bench import Figure, Section
from bench.stacks import stack_with_project

BUILDS = 50
CLIENTS = 8
FINISHED = {"success", "failed", "cancelled"}


def run() -> Section:
    section = Section("Throughput of the local stack", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    yml = "build_script:\n  - echo one line\n"
    with tempfile.TemporaryDirectory() as root, stack_with_project(Path(root), "one-line.git", yml) as started:
        stack, api, project = started
        start = {"accountName": project["accountName"], "projectSlug": project["slug"]}
        path = f"{stack.base_url}/api/projects/{project['accountName']}/{project['slug']}"

        def start_one(_: int) -> str:
            reply = api.post(f"{stack.base_url}/api/builds", json=start)
            reply.raise_for_status()
            return str(reply.json()["version"])

        started = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            versions = list(pool.map(start_one, range(BUILDS)))
        starting = time.perf_counter() - started
        builds = [_wait(api, f"{path}/build/{version}") for version in versions]
        finishing = time.perf_counter() - started
    waits = sorted(_seconds(job["created"], job["started"]) for build in builds for job in build["jobs"])
    succeeded = sum(build["status"] == "success" for build in builds)
    section.figures += [
        Figure(f"{BUILDS} builds started by {CLIENTS} clients", f"{starting:.1f} s, {BUILDS / starting:.1f} builds/s"),
        Figure("Queue to running, median", f"{statistics.median(waits):.1f} s"),
        Figure("Queue to running, 95th percentile", f"{waits[int(len(waits) * 0.95) - 1]:.1f} s"),
        Figure(f"All {BUILDS} finished, from the first start", f"{finishing:.1f} s ({succeeded} succeeded)"),
    ]
    return section


def _wait(api: requests.Session, url: str, seconds: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        build: dict[str, Any] = api.get(url).json()["build"]
        if build["status"] in FINISHED:
            return build
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not finish in {seconds} s")


def _seconds(earlier: str, later: str) -> float:
    return (_moment(later) - _moment(earlier)).total_seconds()


def _moment(text: str) -> datetime:
    # 2014-08-14T05:41:49.1061831+00:00: seven digits of fraction, which fromisoformat takes from Python 3.11
    return datetime.fromisoformat(text)
