"""A job run as an executor runs it: the runner of its ticket in a fresh Python process, which reports its own
memory. For the tests and the benchmark of how the runner scales.

The process imports the runner and nothing of the caller's, so its memory is the runner's own; the script the
job runs is its child and is not counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from chalicelib.protocol.ticket import Ticket

ROOT = Path(__file__).resolve().parents[1]
MARKER = "conveyor-first-line"
LINE_BYTES = 100
LINE_FORMAT = "%09d " + "x" * (LINE_BYTES - 11) + "\n"
# A job's script (print_log.py COUNT): a first line with the time it is printed, then COUNT numbered lines of
# LINE_BYTES, written in large blocks.
PRINTER = f"""import sys, time
print("{MARKER} %.6f" % time.time(), flush=True)
count = int(sys.argv[1])
for start in range(0, count, 10000):
    sys.stdout.write("".join({LINE_FORMAT!r} % n for n in range(start, min(start + 10000, count))))
"""


def printed_blocks(count: int) -> Iterator[bytes]:
    """What PRINTER prints after its first line, in blocks."""
    for start in range(0, count, 10000):
        yield "".join(LINE_FORMAT % n for n in range(start, min(start + 10000, count))).encode()


def after_first_line(log: bytes) -> tuple[float, bytes]:
    """The time PRINTER printed its first line, and what follows that line in ``log``."""
    at = log.index(MARKER.encode())
    end = log.index(b"\n", at)
    return float(log[at + len(MARKER) : end]), log[end + 1 :]


def start_runner(ticket: Ticket) -> subprocess.Popen[str]:
    """The runner of ``ticket`` in a fresh process, which prints its memory when the job is done."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.jobprocess", ticket.to_json()],
        stdout=subprocess.PIPE,
        text=True,
        env={name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ},
        cwd=ROOT,
    )


def runner_result(process: subprocess.Popen[str], seconds: float = 600) -> dict[str, float]:
    """What the process reports once the runner returns: ``baselineBytes`` (its peak RSS after importing the runner,
    before the job), ``peakBytes`` (its peak RSS in all) and ``seconds`` (the job's wall time)."""
    output, _ = process.communicate(timeout=seconds)
    if process.returncode != 0:
        raise AssertionError(f"the runner's process failed ({process.returncode}): {output[-2000:]}")
    result: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return result


def peak_rss() -> int:
    """This process's peak RSS in bytes so far.

    /proc's VmHWM rather than ``ru_maxrss``: Linux carries ``ru_maxrss`` over from the parent through fork and
    exec, so a child of a big process would report its parent's size.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _run(ticket: Ticket) -> dict[str, float]:
    from chalicelib.runner.job import run_ticket

    baseline = peak_rss()
    started = time.monotonic()
    run_ticket(ticket)
    return {"baselineBytes": baseline, "peakBytes": peak_rss(), "seconds": time.monotonic() - started}


if __name__ == "__main__":
    print(json.dumps(_run(Ticket.from_json(sys.argv[1]))))
