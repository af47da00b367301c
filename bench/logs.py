"""How logs scale: a job prints 200 MB; the runner's memory, the log in S3, its download, and reading it live.

Against the embedded emulator, as the tests use it. The build is started through the API; its job is claimed and
its token minted here, as the jobs queue's handler does, and its runner runs in a fresh Python process (as the
local executor runs it, without the sandbox), which reports its own peak RSS (the script it runs is its child,
not counted). The runner sends its log to the app, served here over HTTP on loopback, through the job protocol.
Meanwhile this process reads the start of the log through the API until the script's first line shows.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import Figure, Section
from bench.served import served_api

LINE_COUNT = 2_000_000  # of 100 bytes: 200 MB
PEAK_TARGET_BYTES = 100_000_000
FIRST_BYTE_TARGET_SECONDS = 5.0
MB = 1_000_000
MIB = 1024 * 1024


def run() -> Section:
    """Run the 200 MB job and measure it."""
    with _emulator(), tempfile.TemporaryDirectory(prefix="conveyor-bench-") as root:
        return _measure(Path(root))


def _measure(root: Path) -> Section:
    import requests
    from chalice.test import Client

    from app import app
    from tests import jobprocess
    from tests.builds import BuildProject, appveyor_yml
    from tests.gitserver import GitServer
    from tests.runners import dispatch
    from tests.support import new_account

    with Client(app, stage_name="local") as client, GitServer(root) as git, served_api() as api_url:
        account = new_account(client)
        yml = appveyor_yml("build: off", "test_script:", f"  - python3 print_log.py {LINE_COUNT}")
        project = BuildProject(account, git, {"appveyor.yml": yml, "print_log.py": jobprocess.PRINTER})
        version = project.start()["version"]
        job_id = project.build(version)["jobs"][0]["jobId"]
        runner = jobprocess.start_runner(dispatch(job_id, api_url))
        first_byte_seconds = _first_line_delay(project, job_id, runner)
        memory = jobprocess.runner_result(runner, seconds=1800)
        finished = project.wait(version, seconds=60)
        reply = account.api.get(f"/buildjobs/{job_id}/log")
        location = {name.lower(): value for name, value in reply.headers.items()}.get("location", "")
        started = time.monotonic()
        if location:
            with requests.get(location, stream=True, timeout=60) as download:
                download.raise_for_status()
                served, printed_bytes, printed_hash = _printed_part(download.iter_content(MIB))
        else:
            served, printed_bytes, printed_hash = _printed_part([reply.body])
        download_seconds = time.monotonic() - started

    expected = hashlib.sha256()
    for block in jobprocess.printed_blocks(LINE_COUNT):
        expected.update(block)
    expected_bytes = LINE_COUNT * jobprocess.LINE_BYTES
    whole = finished["status"] == "success" and (printed_bytes, printed_hash) == (expected_bytes, expected.hexdigest())
    baseline, peak = memory["baselineBytes"], memory["peakBytes"]
    return Section(
        "Logs at scale",
        f"A job whose script prints {expected_bytes // MB} MB ({LINE_COUNT:,} lines of {jobprocess.LINE_BYTES} "
        "bytes) after a first line holding the time it was printed. The job is claimed and its token minted as "
        "the jobs queue's handler does; its runner (`chalicelib.runner.job.run_ticket`) runs in a fresh Python "
        "process, as the local executor runs it but without the sandbox, and reports its peak RSS (VmHWM; the "
        "script is its child and not counted). It sends the log through the job protocol to the app, served over "
        "HTTP on loopback. Meanwhile the log's first 4 KiB are read through the API "
        "(`GET /api/buildjobs/{jobId}/log`, `Range: bytes=0-4095`) every 0.1 s. Against the embedded emulator "
        "(moto), so S3 is local: in AWS the uploads take longer, not more memory.",
        [
            Figure("Runner process RSS before the job (after importing the runner)", f"{baseline / MB:.0f} MB"),
            Figure("Runner process peak RSS", f"{peak / MB:.0f} MB", "< 100 MB", peak < PEAK_TARGET_BYTES),
            Figure("Job wall time (`run_ticket`)", f"{memory['seconds']:.1f} s"),
            Figure(
                "Log whole in S3",
                f"{printed_bytes:,} of {expected_bytes:,} bytes printed, sha256 {'equal' if whole else 'different'}"
                f" ({served:,} bytes with the runner's own lines)",
                "every byte printed",
                whole,
            ),
            Figure(
                "Download of the finished log",
                f"{reply.status}" + (f" to a presigned S3 URL, read in {download_seconds:.1f} s" if location else ""),
                "a redirect (302/307)",
                reply.status in (302, 307) and bool(location),
            ),
            Figure(
                "First byte printed to readable through the API",
                "never while the job ran" if first_byte_seconds is None else f"{first_byte_seconds:.1f} s",
                f"< {FIRST_BYTE_TARGET_SECONDS:.0f} s",
                first_byte_seconds is not None and first_byte_seconds < FIRST_BYTE_TARGET_SECONDS,
            ),
        ],
        [
            "The runner keeps the 1 MiB chunk of the log it is filling in memory, and at most one full chunk the "
            "service has not taken yet; it sends the chunk (`PUT /api/runner/jobs/{jobId}/log/{index}`) every 2 s "
            "and whenever full, and the service stores each in S3. The rest of its memory is Python, urllib3 and the "
            "runner's own code: it imports neither the app nor botocore.",
            "A plain `GET` of a running log over 5 MB answers its last 5 MB; `Range: bytes=N-` follows it from byte N.",
        ],
    )


def _first_line_delay(project: Any, job_id: str, runner: Any) -> float | None:
    """Seconds from the script printing its first line to a read of the log's start showing it (None: not while
    the job ran)."""
    from tests import jobprocess

    while runner.poll() is None:
        start = project.account.api.get(f"/buildjobs/{job_id}/log", headers={"Range": "bytes=0-4095"}).body
        if jobprocess.MARKER.encode() in start and b"\n" in start.split(jobprocess.MARKER.encode(), 1)[1]:
            return time.time() - jobprocess.after_first_line(start)[0]
        time.sleep(0.1)
    return None


def _printed_part(blocks: Iterable[bytes]) -> tuple[int, int, str]:
    """Bytes served in all, and the size and sha256 of the LINE_COUNT lines printed after the script's first."""
    from tests import jobprocess

    wanted = LINE_COUNT * jobprocess.LINE_BYTES
    served, taken, digest = 0, 0, hashlib.sha256()
    head: bytearray | None = bytearray()  # the log up to the script's first line, until it has come
    for block in blocks:
        served += len(block)
        if head is not None:
            head += block
            at = head.find(jobprocess.MARKER.encode())
            end = head.find(b"\n", at) if at >= 0 else -1
            if end < 0:
                continue
            block, head = bytes(head[end + 1 :]), None
        piece = block[: wanted - taken]
        digest.update(piece)
        taken += len(piece)
    return served, taken, digest.hexdigest()


@contextmanager
def _emulator() -> Iterator[None]:
    """An embedded emulator with the app's resources; the environment and AWS clients are put back after."""
    from chalicelib.cli import apply_stage_environment
    from chalicelib.local.emulator import Emulator

    saved = dict(os.environ)
    emulator = Emulator(port=0)
    emulator.start()
    _forget_clients()
    try:
        apply_stage_environment("local")
        from app import app
        from chalicelib.local.resources import ensure_resources

        ensure_resources(app)
        yield
    finally:
        emulator.stop()
        os.environ.clear()
        os.environ.update(saved)
        _forget_clients()


def _forget_clients() -> None:
    """Drop the AWS clients an earlier benchmark made for its own emulator, PynamoDB's included."""
    from pynamodb.models import Model

    from chalicelib import aws
    from chalicelib.store import transactions

    aws.forget_clients()
    transactions._connection.cache_clear()
    models = [Model]
    while models:
        model = models.pop()
        models.extend(model.__subclasses__())
        model._connection = None
