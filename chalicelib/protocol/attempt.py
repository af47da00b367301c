"""One attempt at a job, as the code running it sees it: its log, its variables, its time limit, why it stops."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from chalicelib.protocol.logstream import LogStream

TIMED_OUT = "timed out"


@dataclass(kw_only=True)
class Attempt:
    log: LogStream
    variables: dict[str, str]
    deadline: float  # time.monotonic() past which the job stops
    stop_reason: str | None = None
    ended: threading.Event = field(default_factory=threading.Event)  # wakes the heartbeat when the work is done

    def end(self) -> str | None:
        """The work is over: the heartbeat stops now (not at its next beat). Why it stopped early, if it did."""
        reason = self.stop_reason
        self.stop_reason = reason or "finished"
        self.ended.set()
        return reason

    def should_stop(self) -> str | None:
        """Why the work must stop now (a cancel, a lost lease, the time limit), or None."""
        if self.stop_reason is None and time.monotonic() > self.deadline:
            self.stop_reason = TIMED_OUT
        return self.stop_reason

    def say(self, line: str) -> None:
        """A line of Conveyor's own (what runs, why the job ended): kept past the log's limit for its output."""
        self.log.write(line, own=True)

    def output(self, line: str) -> None:
        """A line the job's scripts printed."""
        self.log.write(line)
