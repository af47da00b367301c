"""A log stream that stores its chunks straight in S3 and seals them on close: what the job protocol does for a
runner's log, done in-process, for tests of how logs are stored and read."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.logstream import LogStream, SecretMask
from chalicelib.store import logs


class StoredLog(LogStream):
    def __init__(self, job_prefix: str, mask: SecretMask, **options: Any) -> None:
        super().__init__(logs.chunk_sink(job_prefix), mask, **options)
        self.job_prefix = job_prefix
        self.sealed = False

    def close(self) -> int:
        """Send what is left, then make the chunks the finished log, as a runner's finish does."""
        chunks = super().close()
        if not self.sealed:
            logs.seal_log(self.job_prefix, chunks)
            self.sealed = True
        return chunks
