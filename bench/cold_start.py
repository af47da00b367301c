"""Cold start: importing ``app.py`` in a fresh interpreter, against the floor of importing the stack it is built on;
and what a function's first request loads on top.

Each sample is a new interpreter that times one import with ``perf_counter`` (interpreter start-up left out);
app, first-request and floor samples alternate so all see the same machine. The floor imports ``chalice``,
``boto3`` and ``pynamodb.models`` (what any PynamoDB model needs). The modules only some code paths use must not
be loaded. Every Lambda function of the app imports app.py when it starts, and app.py imports the route table,
not the views (chalicelib/api/routes.py) nor the workers: what serving a request needs, boto3 and PynamoDB
among it, loads with the first request. So "first request" times importing app.py and then what the first
``GET /api/projects/{accountName}/{projectSlug}`` loads before it reads a table (its view module and calls.py's
authentication, with the domain, the store, boto3 and PynamoDB under them), through the function that route's
stub calls. That is what a cold start costs a request, so it is held to the same target as app.py: the floor is
what any request needs of the framework, and the target bounds what the service's own code adds to it.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench import Figure, Section

SAMPLES = 25
TARGET_RATIO = 1.2
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
FLOOR = "import chalice, boto3, pynamodb.models"
APP = "import app"
FIRST_REQUEST_ROUTE = ("GET", "/projects/{accountName}/{projectSlug}")  # an API route: at /api{path}
FIRST_REQUEST = f"""import app
from chalicelib.api.routes import API_ROUTES, handler_of
handler_of(next(route for route in API_ROUTES if (route.method, route.path) == {FIRST_REQUEST_ROUTE!r}))"""

_TIMED = """
import sys, time
started = time.perf_counter()
{imports}
elapsed = time.perf_counter() - started
print(elapsed, ",".join(m for m in {lazy!r} if any(n == m or n.startswith(m + ".") for n in sys.modules)))
"""


def run() -> Section:
    section = Section("Cold start", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    # The service's bytecode up to date, as the floor's libraries have theirs (pip compiles them): where
    # PYTHONDONTWRITEBYTECODE is set, a module edited since bytecode was last written would be compiled from source
    # in every sample, and counted as its import.
    compileall.compile_dir(ROOT / "chalicelib", quiet=1)
    compileall.compile_file(ROOT / "app.py", quiet=1)
    times: dict[str, list[float]] = {APP: [], FIRST_REQUEST: [], FLOOR: []}
    loaded: dict[str, set[str]] = {APP: set(), FIRST_REQUEST: set()}
    for _ in range(SAMPLES):
        for imports in times:
            seconds, modules = _time(imports)
            times[imports].append(seconds)
            if imports in loaded:
                loaded[imports].update(modules)
    app_ms, first_ms, floor_ms = (statistics.median(times[imports]) * 1000 for imports in (APP, FIRST_REQUEST, FLOOR))
    ratio = app_ms / floor_ms
    method, path = FIRST_REQUEST_ROUTE
    section.figures += [
        Figure(f"Import of the floor (median of {SAMPLES})", f"{floor_ms:.0f} ms"),
        Figure(f"Import of app.py (median of {SAMPLES})", f"{app_ms:.0f} ms"),
        Figure("app.py / floor", f"{ratio:.2f}x", f"≤ {TARGET_RATIO}x", ratio <= TARGET_RATIO),
        Figure(
            "Loaded by importing app.py, of " + ", ".join(LAZY),
            ", ".join(sorted(loaded[APP])) or "none",
            "none",
            not loaded[APP],
        ),
        Figure(
            f"Import of app.py and the first {method} /api{path}'s modules (median of {SAMPLES})", f"{first_ms:.0f} ms"
        ),
        Figure(
            "First request / floor",
            f"{first_ms / floor_ms:.2f}x",
            f"≤ {TARGET_RATIO}x",
            first_ms / floor_ms <= TARGET_RATIO,
        ),
        Figure("Loaded by the first request, of the same", ", ".join(sorted(loaded[FIRST_REQUEST])) or "none"),
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
