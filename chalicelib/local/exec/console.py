"""What ``conveyor exec`` prints: each job's log as it arrives (its lines prefixed with the job's name when several
jobs run), what the job reports (messages, tests, artifacts), and the summary table once every job has ended."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

# C0 and C1 control characters but the tab: a job's log, messages, test names and version reach the terminal, and
# must not move its cursor, set its title or clipboard (OSC 52), or forge the summary with escape sequences; nor
# reorder what follows on its line with Unicode's bidirectional embeddings, overrides and isolates (U+202A-U+202E,
# U+2066-U+2069: "Trojan Source"), which would show a failed job's row as another's
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class Console:
    """Whole lines to one stream, from any thread; each under its job's prefix."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdout
        self._lock = threading.Lock()

    def say(self, text: str, prefix: str = "") -> None:
        """Print ``text`` line by line, each after ``prefix``, without control characters but tabs."""
        lines = text.splitlines() or [""]
        with self._lock:
            for line in lines:
                self._stream.write(_CONTROLS.sub("", f"{prefix}{line}") + "\n")
            self._stream.flush()


def prefix_for(title: str, several: bool) -> str:
    """The prefix of a job's lines: its name in brackets when several jobs run, else none."""
    return f"[{title}] " if several else ""


class LogLines:
    """A job's log as the runner sends it (chunks, each replaced as it grows, then the next), as whole new lines."""

    def __init__(self) -> None:
        self._chunks: dict[int, bytes] = {}
        self._index = 0  # the chunk being read
        self._offset = 0  # how much of it was read
        self._partial = b""  # a line cut at a chunk's end, waiting for its rest
        self._lock = threading.Lock()

    def put(self, index: int, data: bytes, final: bool = False) -> list[str]:
        """Store chunk ``index``; the lines it completes (``final``: the log ends with it, a last line and all)."""
        with self._lock:
            if index < self._index:
                return []  # a chunk read whole already, sent again
            self._chunks[index] = data
            found: list[str] = []
            while self._index in self._chunks:
                chunk = self._chunks[self._index]
                fresh = self._partial + chunk[self._offset :]
                self._offset = len(chunk)
                *lines, self._partial = fresh.split(b"\n")
                found += [line.decode("utf-8", errors="replace") for line in lines]
                if self._index + 1 not in self._chunks:
                    break
                del self._chunks[self._index]
                self._index, self._offset = self._index + 1, 0
            if final and self._partial:
                found.append(self._partial.decode("utf-8", errors="replace"))
                self._partial = b""
            return found

    def end(self) -> list[str]:
        """The log's last line, when it ended without a newline."""
        with self._lock:
            rest, self._partial = self._partial, b""
        return [rest.decode("utf-8", errors="replace")] if rest else []


@dataclass(frozen=True)
class Row:
    """One job in the summary."""

    job: str
    status: str
    seconds: float | None
    passed: int
    failed: int
    artifacts: int


def summary(rows: Sequence[Row], artifacts_folder: str) -> str:
    """The table printed once every job has ended."""
    header = ("job", "status", "duration", "tests passed", "tests failed", "artifacts")
    cells = [
        (
            row.job,
            row.status,
            "" if row.seconds is None else f"{row.seconds:.1f} s",
            str(row.passed),
            str(row.failed),
            str(row.artifacts),
        )
        for row in rows
    ]
    widths = [max(len(line[column]) for line in [header, *cells]) for column in range(len(header))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(value.ljust(width) for value, width in zip(values, widths, strict=True)).rstrip()

    table = [line(header), line(["-" * width for width in widths]), *(line(cell) for cell in cells)]
    if any(row.artifacts for row in rows):
        table.append(f"Artifacts are in {artifacts_folder}")
    return "\n".join(table)
