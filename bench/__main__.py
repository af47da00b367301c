"""Run every benchmark (or those named on the command line) and write BENCHMARKS.md."""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import sys
from pathlib import Path

from bench import Section

SECTIONS = [
    "calls",
    "cold_start",
    "logs",
    "throughput",
    "queue_to_running",
    "queue_to_container",
    "conveyor_exec",
    "image_tools",
    "latency",
    "persistence",
    "package",
    "windows_lines",
]
OUTPUT = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:  # make bench BENCH="..." with a name no section has, --help too
        print(f"bench: no section {', '.join(unknown)}; the sections: {' '.join(SECTIONS)}", file=sys.stderr)
        return 2
    sections: list[Section] = []
    for name in names or SECTIONS:
        print(f"bench: {name} ...", flush=True)
        section: Section = importlib.import_module(f"bench.{name}").run()
        print(section.markdown(), flush=True)
        sections.append(section)
    if not names:  # a partial run prints its figures but leaves the committed file whole
        header = [
            "# Benchmarks",
            "",
            f"Measured by `make bench` on {datetime.date.today().isoformat()}: {machine()}.",
            "",
        ]
        OUTPUT.write_text("\n".join(header) + "\n" + "\n".join(section.markdown() for section in sections))
        print(f"bench: wrote {OUTPUT}")
    return 0 if all(figure.met is not False for section in sections for figure in section.figures) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
