"""The Windows build agent's overhead per cmd line, measured under Wine (the agent's code, the official Windows
CPython, Wine's cmd.exe; a real Windows machine starts processes faster, and its figure will differ).

Each line of a job runs in its own ``cmd.exe``, inside a batch file that writes the environment, the folder and the
status for the next line (runner/windows/cmd_session.py). The floor is what any line costs: starting ``cmd.exe /c``
for it from the same Python, in the same Job Object. The overhead is what the session adds: writing the batch file,
dumping ``set`` and ``cd``, and reading them back. Lines alternate with floor samples, after a warm-up (Wine's first
start of a prefix takes seconds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from bench import Figure, Section

ROOT = Path(__file__).resolve().parents[1]
WINDOWS = ROOT / ".windows"
SAMPLES = 30
TARGET_MS = 100  # per line, above the floor, under Wine (a shared machine measured 4 to 22 ms)
_SCRIPT = """
import json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from chalicelib.runner.windows.cmd_session import WindowsSession

work = Path(tempfile.mkdtemp())
(work / "build").mkdir()
session = WindowsSession(work / "build", lambda line: None, work / "commands")
variables = dict(os.environ)
lines, floors = [], []
for sample in range(SAMPLES + 3):
    started = time.perf_counter()
    session.run("set LAST=%RANDOM%", variables, lambda: None)
    line = time.perf_counter() - started
    started = time.perf_counter()
    session.job.start("cmd.exe /D /C set LAST=1", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL).wait()
    floor = time.perf_counter() - started
    if sample >= 3:
        lines.append(line)
        floors.append(floor)
session.close()
print(json.dumps({"line": statistics.median(lines), "floor": statistics.median(floors)}))
"""


def run() -> Section:
    section = Section(
        "Windows agent: overhead per cmd line (under Wine)",
        " ".join((__doc__ or "").split()),
    )
    python = WINDOWS / "python" / "python.exe"
    if shutil.which("wine") is None or not python.exists():
        section.notes.append("Not measured: Wine or the Windows CPython is not installed (make windows, as root).")
        return section
    environment = {**os.environ, "WINEPREFIX": str(WINDOWS / "prefix"), "WINEDEBUG": "-all"}
    script = _SCRIPT.replace("SAMPLES", str(SAMPLES))
    done = subprocess.run(
        ["wine", str(python), "-c", script],
        env=environment,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    line, floor = measured["line"] * 1000, measured["floor"] * 1000
    overhead = line - floor
    section.figures += [
        Figure(f"A cmd line through the session, Wine (median of {SAMPLES})", f"{line:.0f} ms"),
        Figure(f"cmd.exe /c alone, the floor, Wine (median of {SAMPLES})", f"{floor:.0f} ms"),
        Figure("Overhead per cmd line, Wine", f"{overhead:.0f} ms", f"≤ {TARGET_MS} ms", overhead <= TARGET_MS),
    ]
    return section
