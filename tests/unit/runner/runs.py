"""A build job's attempt as the runner's phases see it, with no service behind it: for the tests of what runs on
the runner's side (its scripts, its Build Worker API)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from chalicelib.protocol.job_spec import JobSpec
from chalicelib.protocol.logstream import LogStream, SecretMask
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.protocol import JobClient
from chalicelib.runner.run import Run


class Log:
    """The job's log as its lines."""

    def __init__(self) -> None:
        self.chunks: dict[int, bytes] = {}

    def __call__(self, index: int, body: memoryview) -> None:
        self.chunks[index] = bytes(body)

    def lines(self) -> list[str]:
        return b"".join(self.chunks[index] for index in sorted(self.chunks)).decode().splitlines()


def new_run(folder: Path, log: Log, spec: JobSpec | None = None) -> Run:
    """An attempt whose client is never called (nothing listens at its URL) and whose scripts run in ``folder``."""
    ticket = Ticket("http://127.0.0.1:9", "job-1", "t0ken")
    return Run(
        log=LogStream(log, SecretMask([]), flush_seconds=3600),
        variables={"PATH": os.environ["PATH"]},
        deadline=time.monotonic() + 60,
        client=JobClient(ticket),
        spec=spec if spec is not None else JobSpec(),  # type: ignore[typeddict-item]
        folder=folder,
    )
