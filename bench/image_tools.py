"""AppVeyor's Ubuntu tools in Conveyor's image (issue 44), on an idle local stack with the container executor.

Queue to the first command with the full image, as in the section Queue to running in a container (10 builds of
``Ubuntu2204`` after one not counted; the target stays ≤ 1 s median); ``nvm use`` of a version the image holds,
timed in a job's session (10 switches among majors, the median); each service's start as ``services.sh`` reports
it in a job asking for all four; and the image itself: its size on disk, and its last build's time from scratch
(``make image``, as images/ubuntu/build.sh records it next to the image).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from bench import Figure, Section, container_runtime
from bench.queue_to_container import YML as FIRST_COMMAND_YML
from bench.queue_to_running import FINISHED, _one_build, _seconds, p95
from bench.stacks import stack_with_project

BUILDS = 10
MEDIAN_TARGET_SECONDS = 1.0
NVM_TARGET_SECONDS = 1.0
MAJORS = (16, 18, 20, 22, 24)
NVM_YML = "image: Ubuntu2204\nbuild_script:\n" + "".join(
    f"  - s=$(date +%s.%N); nvm use {major} > /dev/null; echo NVM-USE {major} $s $(date +%s.%N)\n"
    for major in MAJORS * 2
)
SERVICES_YML = "image: Ubuntu2204\nservices:\n  - postgresql\n  - mysql\n  - redis\n  - rabbitmq\nbuild: off\n"
_NVM = re.compile(r"^NVM-USE \d+ (\d+\.\d+) (\d+\.\d+)$", re.MULTILINE)
_SERVICE = re.compile(r"^Service (\S+) started in (\d+\.\d) s$", re.MULTILINE)


def run() -> Section:

    how = __doc__.split("\n\n", 1)[1].replace("\n", " ").strip()
    section = Section("Conveyor's image: its tools, versions and services", how)
    made = container_runtime(section)
    if made is None:
        return section
    with tempfile.TemporaryDirectory() as root:
        with stack_with_project(Path(root), "first-command.git", FIRST_COMMAND_YML, containers=True) as started:
            stack, api, project = started
            runs = [_one_build(api, stack.base_url, project) for _ in range(BUILDS + 1)][1:]
        first_command = sorted(run["first_command"] for run in runs)
        nvm_log = _one_log(Path(root) / "nvm", NVM_YML)
        services_log = _one_log(Path(root) / "services", SERVICES_YML)
    median = statistics.median(first_command)
    switches = [float(end) - float(start) for start, end in _NVM.findall(nvm_log)]
    section.figures += [
        Figure("Queue to the job's first command, full image, median", _seconds(median), "≤ 1.0 s", median <= 1.0),
        Figure("… 95th percentile", _seconds(p95(first_command))),
        Figure(f"Builds that succeeded, of {BUILDS}", str(sum(run["status"] == "success" for run in runs))),
    ]
    if switches:
        nvm = statistics.median(switches)
        section.figures.append(
            Figure(f"`nvm use` of a version the image holds, median of {len(switches)}", _seconds(nvm), "≤ 1.0 s",
                   nvm <= NVM_TARGET_SECONDS)
        )  # fmt: skip
    else:
        section.notes.append(f"nvm use was not timed: the job's log held no timing ({nvm_log[-300:]!r}).")
    for name, seconds in _SERVICE.findall(services_log):
        section.figures.append(Figure(f"Service `{name}` started (in the job, before init)", f"{seconds} s"))
    if not _SERVICE.findall(services_log):
        section.notes.append(f"No service reported its start: {services_log[-300:]!r}.")
    section.figures += _image_figures(made.image)
    return section


def _one_log(root: Path, yml: str) -> str:
    """The log of one build of ``yml`` on a fresh stack with containers."""
    with stack_with_project(root, "image.git", yml, containers=True) as (stack, api, project):
        return _run_for_log(api, stack.base_url, project)


def _run_for_log(api: requests.Session, base_url: str, project: dict[str, Any]) -> str:
    reply = api.post(
        f"{base_url}/api/builds", json={"accountName": project["accountName"], "projectSlug": project["slug"]}
    )
    reply.raise_for_status()
    url = f"{base_url}/api/projects/{project['accountName']}/{project['slug']}/build/{reply.json()['version']}"
    deadline = time.monotonic() + 300
    while (build := api.get(url).json()["build"])["status"] not in FINISHED and time.monotonic() < deadline:
        time.sleep(0.5)
    return str(api.get(f"{base_url}/api/buildjobs/{build['jobs'][0]['jobId']}/log").text)


def _image_figures(image: Path) -> list[Figure]:
    size = subprocess.run(["du", "-sb", str(image)], capture_output=True, text=True, check=False).stdout.split()
    figures = [Figure("The image's size on disk (`du -sb .images/ubuntu`)", f"{int(size[0]) / 2**30:.2f} GiB")]
    record = image.parent / f"{image.name}.build-seconds"
    if record.is_file():
        seconds = int(record.read_text().split()[0])
        figures.append(
            Figure("Its last build from scratch (`make image`)", f"{seconds // 60} min {seconds % 60} s", "< 10 min",
                   seconds < 600)
        )  # fmt: skip
    return figures
