"""A burst on the local stack: 50 one-line builds started at once, through ``conveyor local`` (``make run``).

Eight clients start the builds of one project (its repository on a local git server) as fast as the API takes
them. The stack's pump scales each queue's handlers with the messages waiting, as Lambda's event-source mapping
scales a function with its queue's backlog, up to its maximum concurrency (``CONVEYOR_MAX_CONCURRENCY``); each
job's runner runs in a sandbox of its own. Queue to running is measured as in the section Queue to running, over
all 50 jobs: to each job's ``started`` as the API reports it, and to its first command (an ``init`` script that prints
its time), both from its build's ``created``. Total time is from the first start to the last build finished. These
have no target (issue 24 asks for them reported): on a small machine the 50 sandboxes share its few cores.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

from bench import Figure, Section
from bench.queue_to_running import YML, first_command_at, moment, p95
from bench.stacks import stack_with_project

BUILDS = 50
CLIENTS = 8
FINISHED = {"success", "failed", "cancelled"}


def run() -> Section:
    from chalicelib.local.stack import LocalOptions

    section = Section(
        "Throughput: a burst of builds on the local stack", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip()
    )
    with tempfile.TemporaryDirectory() as root, stack_with_project(Path(root), "one-line.git", YML) as started:
        stack, api, project = started
        start = {"accountName": project["accountName"], "projectSlug": project["slug"]}
        path = f"{stack.base_url}/api/projects/{project['accountName']}/{project['slug']}"

        def start_one(_: int) -> str:
            reply = api.post(f"{stack.base_url}/api/builds", json=start)
            reply.raise_for_status()
            return str(reply.json()["version"])

        began = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            versions = list(pool.map(start_one, range(BUILDS)))
        starting = time.perf_counter() - began
        builds = [_wait(api, f"{path}/build/{version}") for version in versions]
        finishing = time.perf_counter() - began
        first_commands = {
            job["jobId"]: first_command_at(api, stack.base_url, job["jobId"])
            for build in builds
            for job in build["jobs"]
        }
    jobs = [(build, job) for build in builds for job in build["jobs"]]
    claimed = sorted(_epoch(job["started"]) - _epoch(build["created"]) for build, job in jobs)
    first_command = sorted(first_commands[job["jobId"]] - _epoch(build["created"]) for build, job in jobs)
    succeeded = sum(build["status"] == "success" for build in builds)
    section.figures += [
        Figure(f"{BUILDS} builds started by {CLIENTS} clients", f"{starting:.1f} s, {BUILDS / starting:.1f} builds/s"),
        Figure("Queue to running as the API shows it (job `started` − build `created`), median", _median(claimed)),
        Figure("… 95th percentile", f"{p95(claimed):.2f} s"),
        Figure("Queue to the job's first command (its `init` script), median", _median(first_command)),
        Figure("… 95th percentile", f"{p95(first_command):.2f} s"),
        Figure("Most jobs running at once (from their `started` and `finished`)", str(_most_at_once(jobs))),
        Figure(f"Total: all {BUILDS} finished, from the first start", f"{finishing:.1f} s ({succeeded} succeeded)"),
    ]
    section.notes.append(
        f"The stack's maximum concurrency per queue: {LocalOptions.from_environment().max_concurrency}."
    )
    return section


def _wait(api: requests.Session, url: str, seconds: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        build: dict[str, Any] = api.get(url).json()["build"]
        if build["status"] in FINISHED:
            return build
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not finish in {seconds} s")


def _most_at_once(jobs: list[tuple[dict[str, Any], dict[str, Any]]]) -> int:
    """The most jobs between their ``started`` and ``finished`` at one moment."""
    changes = sorted(  # at one moment, -1 before +1: a job that ends as another starts did not overlap it
        change for _, job in jobs for change in ((moment(job["started"]), 1), (moment(job["finished"]), -1))
    )
    most = running = 0
    for _, step in changes:
        running += step
        most = max(most, running)
    return most


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s"


def _epoch(text: str) -> float:
    return moment(text).timestamp()
