"""Queue to running on an idle local stack, each build job's runner in its sandbox (``make run`` as it is).

One project of ``conveyor local`` (its repository on a local git server) builds 20 times, one build after another,
each started once the one before has finished (after one build not counted, which warms the stack up). Its first
command, an ``init`` script, prints the time it runs. Queue to running is measured twice: to the job's ``started``
as the API shows it (the jobs queue's handler has claimed the job; its sandbox is not started yet), and to that
first command (the sandbox, the runner's Python and imports, its fetch of the job's spec, the script's shell),
both from the build's ``created``. Issue 24's targets hold for both, the first command being what "running" means
with the sandboxed runner: median ≤ 0.5 s, 95th percentile ≤ 1 s. Then the parts of the second, timed alone on
this machine, 10 times each: the local executor's sandbox running ``/bin/true``, and the runner's interpreter
started in it, bare and importing the runner.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import requests

from bench import Figure, Section
from bench.stacks import stack_with_project

BUILDS = 20
SAMPLES = 10
MEDIAN_TARGET_SECONDS = 0.5  # issue 24's targets, for single builds on an idle stack with the sandboxed runner
P95_TARGET_SECONDS = 1.0
FINISHED = {"success", "failed", "cancelled"}
MARKER = "conveyor-first-command"
YML = f"init:\n  - echo {MARKER} $(date +%s.%N)\nbuild_script:\n  - echo one line\n"
_STAMP = re.compile(rf"^{MARKER} (\d+\.\d+)$", re.MULTILINE)


def run() -> Section:
    section = Section("Queue to running", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    with tempfile.TemporaryDirectory() as root, stack_with_project(Path(root), "first-command.git", YML) as started:
        stack, api, project = started
        runs = [_one_build(api, stack.base_url, project) for _ in range(BUILDS + 1)][1:]
        said = [line for line in stack.stderr.splitlines() if "sandbox" in line.lower()]  # a refusal, a warning
    claimed = sorted(run["claimed"] for run in runs)
    first_command = sorted(run["first_command"] for run in runs)
    whole = sorted(run["finished"] for run in runs)
    succeeded = sum(run["status"] == "success" for run in runs)
    parts = _parts()
    section.figures += [
        _median_figure("Queue to running as the API shows it (job `started` − build `created`), median", claimed),
        _p95_figure(claimed),
        _median_figure("Queue to the job's first command (its `init` script), median", first_command),
        _p95_figure(first_command),
        Figure(
            "Claimed to the first command (sandbox, runner start, spec, shell), median",
            _seconds(statistics.median(run["first_command"] - run["claimed"] for run in runs)),
        ),
        Figure(
            f"Build created to finished (one `init` line, one `build_script` line), median of {BUILDS}",
            f"{_seconds(statistics.median(whole))} ({succeeded} of {BUILDS} succeeded)",
        ),
        Figure(f"Sandbox start: `unshare … setpriv … /bin/true`, median of {SAMPLES}", _seconds(parts["sandbox"])),
        Figure("… with `python -I -c pass` in it instead", _seconds(parts["python"])),
        Figure("… with `python -I -c 'import chalicelib.runner.job'` in it instead", _seconds(parts["runner"])),
    ]
    section.notes += [f"The stack said: {line[:300]}" for line in said]
    return section


def _one_build(api: requests.Session, base_url: str, project: dict[str, Any]) -> dict[str, Any]:
    """Start a build, wait for it to finish; its timings, in seconds from the build's ``created``."""
    reply = api.post(
        f"{base_url}/api/builds", json={"accountName": project["accountName"], "projectSlug": project["slug"]}
    )
    reply.raise_for_status()
    url = f"{base_url}/api/projects/{project['accountName']}/{project['slug']}/build/{reply.json()['version']}"
    deadline = time.monotonic() + 60
    while True:
        build: dict[str, Any] = api.get(url).json()["build"]
        if build["status"] in FINISHED:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not finish in 60 s: {build['status']}")
        time.sleep(0.1)
    job = build["jobs"][0]
    created = moment(build["created"]).timestamp()
    return {
        "status": build["status"],
        "claimed": moment(job["started"]).timestamp() - created,
        "first_command": first_command_at(api, base_url, job["jobId"]) - created,
        "finished": moment(build["finished"]).timestamp() - created,
    }


def first_command_at(api: requests.Session, base_url: str, job_id: str) -> float:
    """When a job of ``YML`` ran its first command, as that command printed it (seconds since the epoch)."""
    log = api.get(f"{base_url}/api/buildjobs/{job_id}/log").text
    stamp = _STAMP.search(log)
    if stamp is None:
        raise RuntimeError(f"no '{MARKER}' line in job {job_id}'s log:\n{log[-2000:]}")
    return float(stamp.group(1))


def _parts() -> dict[str, float]:
    """Median seconds of the local executor's sandbox running ``/bin/true``, a bare Python, and the runner's imports."""
    from chalicelib.runner import sandbox as local

    made = local.sandbox()
    if not isinstance(made, local.Sandbox):
        raise RuntimeError(f"no sandbox on this machine: {made}")
    python = [sys.executable, "-I", "-c"]
    commands = {
        "sandbox": [*made.prefix, "/bin/true"],
        "python": [*made.prefix, *python, "pass"],
        "runner": [*made.prefix, *python, "import chalicelib.runner.job"],
    }
    environment = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}  # as the executor's
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(SAMPLES):
        for name, command in commands.items():  # in turn, so all see the same machine
            started = time.perf_counter()
            subprocess.run(command, env=environment, cwd="/", check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def _median_figure(measure: str, values: list[float]) -> Figure:
    median = statistics.median(values)
    return Figure(measure, _seconds(median), f"≤ {MEDIAN_TARGET_SECONDS} s", median <= MEDIAN_TARGET_SECONDS)


def _p95_figure(values: list[float]) -> Figure:
    value = p95(values)
    return Figure("… 95th percentile", _seconds(value), f"≤ {P95_TARGET_SECONDS} s", value <= P95_TARGET_SECONDS)


def p95(ordered: list[float]) -> float:
    """The 95th percentile of sorted values, by nearest rank (of 20: the 19th; of 50: the 48th)."""
    return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def moment(text: str) -> datetime:
    """A timestamp as the API writes it."""
    # 2014-08-14T05:41:49.1061831+00:00: seven digits of fraction, which fromisoformat takes from Python 3.11
    return datetime.fromisoformat(text)
