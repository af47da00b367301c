"""A job's log and artifacts have caps (issue 43, section 2): past them, a clear line, not a full disk. A log keeps
its runner's own last lines (why the job ended) beyond the cap of its output."""

from __future__ import annotations

from pathlib import Path

import pytest

from chalicelib.protocol.logstream import LogStream, SecretMask
from chalicelib.runner import run as run_module
from chalicelib.runner.artifacts import ArtifactRefused
from tests.unit.runner.runs import Log, new_run


def test_output_past_the_log_cap_is_left_out_saying_so_once_and_the_runners_last_line_is_kept() -> None:
    log = Log()
    stream = LogStream(log, SecretMask([]), flush_seconds=3600, chunk_bytes=256, max_bytes=1024 * 1024)
    line = "x" * 1023  # with its newline, 1 KiB
    for _ in range(1024 + 500):
        stream.write(line)
    stream.write("The job exceeded its time limit of 60 min 0 s.", own=True)
    stream.close()

    lines = log.lines()
    assert lines.count(line) == 1024  # 1 MiB of output, then nothing of it
    assert [text for text in lines if text.startswith("[The log reached its limit of 1 MB")] == [lines[1024]]
    assert lines[-1] == "The job exceeded its time limit of 60 min 0 s."


class CountingMask(SecretMask):
    """A mask that counts the lines it is asked to mask."""

    masked = 0

    def __call__(self, text: str) -> str:
        self.masked += 1
        return super().__call__(text)


def test_output_past_the_log_cap_costs_the_runner_no_masking_or_splitting() -> None:
    """The runner is outside the job's CPU limit: a job that prints without end makes it only count and drop."""
    mask = CountingMask(["hunter22"])
    stream = LogStream(Log(), mask, flush_seconds=3600, chunk_bytes=256, max_bytes=64 * 1024)
    for _ in range(64 + 1000):
        stream.write("x" * 1023)
    stream.write("The job failed.", own=True)
    stream.close()

    assert mask.masked == 64 + 1 + 1  # the lines up to the cap, the one that reached it, the runner's own


def test_an_artifact_past_the_jobs_artifact_cap_is_refused_before_it_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "MAX_ARTIFACTS_BYTES", 100)
    attempt = new_run(tmp_path, Log())
    big = tmp_path / "big.bin"
    big.write_bytes(b"0" * 101)
    try:
        with pytest.raises(ArtifactRefused, match="big.bin .101 bytes. was not uploaded"):
            attempt.upload_artifact("big.bin", big)  # refused before any call: nothing listens at the client's URL
    finally:
        attempt.session.close()
