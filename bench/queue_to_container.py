"""Queue to running on an idle local stack with the container executor (``make run`` where podman and the local
image are here).

As in the section Queue to running, one project builds one build after another (10 here, after one not counted),
its first command an ``init`` script that prints its time; its image is ``Ubuntu2204``, so each job runs in a
fresh container of Conveyor's local image (chalicelib/executors/containers.py), within the job's limits as ``make
run`` sets them by default (4096 MB of memory, 2 CPUs, a disk of its own of 10240 MB: issue 43). Issue 35's target:
the median from the build's ``created`` to that first command stays ≤ 1 s. Then the container's start alone, 5 times
each: podman with runc running ``/bin/true`` in the image's overlay with no network, and with the executor's user
mapping and slirp4netns network.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench import Figure, Section, container_runtime
from bench.queue_to_running import MARKER, _one_build, _seconds, p95
from bench.stacks import stack_with_project

BUILDS = 10
SAMPLES = 5
MEDIAN_TARGET_SECONDS = 1.0  # issue 35's, for the container executor
YML = f"image: Ubuntu2204\ninit:\n  - echo {MARKER} $(date +%s.%N)\nbuild_script:\n  - echo one line\n"


def run() -> Section:
    from chalicelib.executors import containers

    section = Section("Queue to running in a container", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    made = container_runtime(section)
    if made is None:
        return section
    with (
        tempfile.TemporaryDirectory() as root,
        stack_with_project(Path(root), "first-command.git", YML, containers=True) as started,
    ):
        stack, api, project = started
        runs = [_one_build(api, stack.base_url, project) for _ in range(BUILDS + 1)][1:]
    first_command = sorted(run["first_command"] for run in runs)
    median = statistics.median(first_command)
    succeeded = sum(run["status"] == "success" for run in runs)
    bare = [made.podman, "--runtime", "runc", "run", "--rm", *containers.limits()]
    mapped = [*bare, *containers.MAPPING, "--user", "appveyor", "--network", "slirp4netns"]
    section.figures += [
        Figure(
            "Queue to the job's first command (its `init` script), median",
            _seconds(median),
            f"≤ {MEDIAN_TARGET_SECONDS} s",
            median <= MEDIAN_TARGET_SECONDS,
        ),
        Figure("… 95th percentile", _seconds(p95(first_command))),
        Figure(
            "Claimed to the first command (container, sandboxed runner, spec, shell), median",
            _seconds(statistics.median(run["first_command"] - run["claimed"] for run in runs)),
        ),
        Figure(f"Builds that succeeded, of {BUILDS}", str(succeeded)),
        Figure(
            f"Container start: `podman --runtime runc run --rm --network none --rootfs IMAGE:O /bin/true`, median of "
            f"{SAMPLES}",
            _seconds(_median_seconds([*bare, "--network", "none", "--rootfs", f"{made.image}:O", "/bin/true"])),
        ),
        Figure(
            "… with the executor's user mapping, user and slirp4netns network",
            _seconds(_median_seconds([*mapped, "--rootfs", f"{made.image}:O", "/bin/true"])),
        ),
    ]
    return section


def _median_seconds(command: list[str]) -> float:
    times = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)
