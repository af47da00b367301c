"""Cold start: importing ``app.py`` in a fresh interpreter, against the floor of importing the stack it is built on.

Each sample is a new interpreter that times one import with ``perf_counter`` (interpreter start-up left out);
app and floor samples alternate so both see the same machine. The floor imports ``chalice``, ``boto3`` and
``pynamodb.models`` (what any PynamoDB model needs). The modules only some code paths use must not be loaded.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench import Figure, Section

SAMPLES = 15
TARGET_RATIO = 1.3
# what runs jobs (the runner, the executors) and what only the local stack uses (the emulator, moto) included
LAZY = (
    "dulwich",
    "yaml",
    "ftplib",
    "azure",
    "moto",
    "requests",
    "re2",
    "chalicelib.runner",
    "chalicelib.executors",
    "chalicelib.deploy",
    "chalicelib.scm",
    "chalicelib.local",
)
ROOT = Path(__file__).resolve().parents[1]

_TIMED = """
import sys, time
started = time.perf_counter()
{imports}
elapsed = time.perf_counter() - started
print(elapsed, ",".join(m for m in {lazy!r} if any(n == m or n.startswith(m + ".") for n in sys.modules)))
"""


def run() -> Section:
    section = Section("Cold start", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    app_times, floor_times, loaded = [], [], set()
    for _ in range(SAMPLES):
        seconds, modules = _time("import app")
        app_times.append(seconds)
        loaded.update(modules)
        floor_times.append(_time("import chalice, boto3, pynamodb.models")[0])
    app_ms, floor_ms = statistics.median(app_times) * 1000, statistics.median(floor_times) * 1000
    ratio = app_ms / floor_ms
    section.figures += [
        Figure("Import of the floor (median of 15)", f"{floor_ms:.0f} ms"),
        Figure("Import of app.py (median of 15)", f"{app_ms:.0f} ms"),
        Figure("app.py / floor", f"{ratio:.2f}x", f"≤ {TARGET_RATIO}x", ratio <= TARGET_RATIO),
        Figure(
            "Loaded by importing app.py, of " + ", ".join(LAZY),
            ", ".join(sorted(loaded)) or "none",
            "none",
            not loaded,
        ),
    ]
    return section


def _time(imports: str) -> tuple[float, list[str]]:
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    environment = {**os.environ, **config["stages"]["prod"]["environment_variables"], "PYTHONPATH": str(ROOT)}
    program = _TIMED.format(imports=imports, lazy=LAZY)
    output = subprocess.run(
        [sys.executable, "-c", program], env=environment, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return float(output[0]), output[1].split(",") if len(output) > 1 else []
