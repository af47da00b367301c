"""A job run as Lambda runs it: its SQS message handed to the app's handler in a fresh Python process, which
reports its own memory. For the tests and the benchmark of how the runner scales.

The process imports what Lambda imports (``app``) and nothing of the caller's, so its memory is the runner's
own; the script the job runs is its child and is not counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def job_event(job_id: str, seconds: float = 10.0) -> dict[str, Any]:
    """The SQS event Lambda would hand the jobs handler for ``job_id``'s message, taken off the queue."""
    from chalicelib import aws
    from chalicelib.config import settings
    from chalicelib.local.pump import sqs_event

    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=settings().jobs_queue)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
            if json.loads(message["Body"]).get("jobId") == job_id:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                return sqs_event(arn, [message])
    raise AssertionError(f"no message for job {job_id} on the jobs queue after {seconds} s")


def start_handler(event: dict[str, Any]) -> subprocess.Popen[str]:
    """The jobs handler on ``event`` in a fresh process (this process's environment: the same AWS endpoint)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.jobprocess", json.dumps(event)],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        cwd=ROOT,
    )


def handler_result(process: subprocess.Popen[str], seconds: float = 600) -> dict[str, float]:
    """What the process reports once the handler returns: ``baselineBytes`` (its peak RSS after importing the app,
    before the job), ``peakBytes`` (its peak RSS in all) and ``seconds`` (the handler's wall time)."""
    output, _ = process.communicate(timeout=seconds)
    if process.returncode != 0:
        raise AssertionError(f"the handler's process failed ({process.returncode}): {output[-2000:]}")
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


def _handle(event: dict[str, Any]) -> dict[str, float]:
    from chalice.local import LambdaContext

    from app import app

    baseline = peak_rss()
    started = time.monotonic()
    app.handler_map["run_jobs"](event, LambdaContext("run_jobs", memory_size=3008, max_runtime_ms=900_000))
    return {"baselineBytes": baseline, "peakBytes": peak_rss(), "seconds": time.monotonic() - started}


if __name__ == "__main__":
    print(json.dumps(_handle(json.loads(sys.argv[1]))))
