"""conveyor exec of a one-line job: its wall time from the command's start to its exit.

A checkout made with dulwich whose appveyor.yml has one ``build_script`` line (``echo hello``); ``conveyor exec``
runs in it as a user runs it (a new Python process: ``python -m chalicelib.cli exec``), with the local image built.
That covers loading the command, reading the working tree into a commit, planning the job, podman's first container
(the executor's probe, which runs while the tree is read), the job's container and its sandboxed runner fetching
the commit and running the line, the container's removal and the summary. One run first, not counted (the page
cache); then the median of 5. Issue 47's target: ≤ 3 s with the image built, on a 2-core machine. Apart: loading
the command alone (a Python process importing the CLI and exec's modules).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Figure, Section, container_runtime

SAMPLES = 5
TARGET_SECONDS = 3.0
YML = "build_script:\n  - echo hello\n"


def run() -> Section:
    from dulwich import porcelain

    section = Section("conveyor exec", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    made = container_runtime(section)
    if made is None:
        return section
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        porcelain.init(root)
        (folder / "appveyor.yml").write_text(YML)
        porcelain.add(root, [str(folder / "appveyor.yml")])
        porcelain.commit(root, message=b"One line", author=b"B <b@e>", committer=b"B <b@e>")
        _timed([sys.executable, "-m", "chalicelib.cli", "exec"], folder)
        walls = [_timed([sys.executable, "-m", "chalicelib.cli", "exec"], folder) for _ in range(SAMPLES)]
    loads = [
        _timed([sys.executable, "-c", "import chalicelib.cli, chalicelib.local.exec.command"], Path.cwd())
        for _ in range(SAMPLES)
    ]
    median = statistics.median(walls)
    section.figures += [
        Figure(
            f"`conveyor exec` of a one-line job, start to exit, median of {SAMPLES}",
            f"{median:.2f} s",
            f"≤ {TARGET_SECONDS:.0f} s",
            median <= TARGET_SECONDS,
        ),
        Figure("… slowest", f"{max(walls):.2f} s"),
        Figure("Loading the command (Python, the CLI, exec's modules), median", f"{statistics.median(loads):.2f} s"),
    ]
    return section


def _timed(command: list[str], folder: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False, timeout=300)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")
    return seconds
