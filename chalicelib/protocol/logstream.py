"""A running job's log: masked line by line, then sent in numbered chunks that the API can read meanwhile.

Where a chunk goes is the caller's ``sink``: the job protocol for a runner, S3 itself for the service's own jobs.
A runner keeps its last chunk back when it closes the log (``close_keeping_tail``): its finish carries it.
"""

from __future__ import annotations

import base64
import logging
import mmap
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MASK = "[secure]"
MIN_SECRET_CHARS = 3  # shorter values would mask every "a" or "10" of the log, destroying it
MIN_ENCODED_SECRET_CHARS = 6  # the base64 form of shorter values is too likely to occur by chance
MAX_LINE_BYTES = 64 * 1024  # a runaway line is cut into lines of this size
MAX_WAITING_CHUNKS = 1  # full chunks kept while the sink refuses them; beyond this, writers wait
MAX_RETRY_SECONDS = 10.0
CHUNK_BYTES = 1024 * 1024  # a chunk is one request of the job protocol: well under any gateway's body limit
MAX_LOG_BYTES = 100 * 1024 * 1024  # a job's output kept in its log, at most; the service takes 128 chunks
OWN_LINES_BYTES = 1024 * 1024  # beyond it, room for the runner's own last lines (why the job ended)
CAPPED = (
    "[The log reached its limit of {megabytes} MB: the rest of this job's output is left out of it. The job goes on; "
    "its last lines say how it ended.]"
)

Sink = Callable[[int, memoryview], None]  # stores (or replaces) chunk ``index`` of the log

logger = logging.getLogger(__name__)


class SecretMask:
    """Replaces every secret value in text with "[secure]".

    Longer secrets are masked first, so a secret containing another is masked whole. Each line of a
    multi-line secret (a key file, say) is masked on its own too, since logs arrive line by line; so is
    the standard base64 form of secrets of 6 characters or more. Values of fewer than 3 characters
    (ignoring surrounding whitespace) are not masked at all: masking "a" or "1" would destroy the log.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        """Mask these too from now on (an ID token the job was handed, say)."""
        values = set(self._values)
        for secret in secrets:
            for value in (secret, *secret.splitlines()):
                if len(value.strip()) >= MIN_SECRET_CHARS:
                    values.update((value, value.strip()))  # a shell may well drop the surrounding spaces
            if len(secret.strip()) >= MIN_ENCODED_SECRET_CHARS:
                values.add(base64.b64encode(secret.encode()).decode())
        longest_first = sorted(values, key=len, reverse=True)
        self._values = values
        self._pattern = re.compile("|".join(map(re.escape, longest_first))) if longest_first else None  # one swap

    def __call__(self, text: str) -> str:
        pattern = self._pattern
        return pattern.sub(MASK, text) if pattern else text


@dataclass(frozen=True)
class LogEnd:
    """A log closed with its last chunk kept back from the sink, for the caller's last word to carry."""

    chunks: int  # how many chunks the log has
    tail: bytes | None  # chunk ``chunks - 1`` as it ends, which the sink never got (None: the sink has every chunk)
    tail_sent: bool  # whether the sink was ever handed a version of that last chunk (and so may hold one)


class LogStream:
    """A job's log, written line by line, visible through the API within seconds, never all in memory.

    The log is a sequence of numbered chunks (S3 has no append): the current chunk is kept in memory and
    sent again whole every ``flush_seconds`` by a background thread; once it holds ``chunk_bytes`` it
    is sent a last time and a new chunk begins. ``close`` sends what is left and says how many chunks there are.

    Memory stays near one chunk whatever the log's size: a chunk is filled in place, in an anonymous
    mapping of its full size (memory is taken only as it is written, and given back once the sink has the full
    chunk), and uploads read it there rather than a copy (the writer only writes past what an upload reads).
    The writer itself stores each full chunk, so it does not start filling the next until the sink has it.
    """

    def __init__(
        self,
        sink: Sink,
        mask: SecretMask,
        flush_seconds: float = 2.0,
        chunk_bytes: int = CHUNK_BYTES,
        name: str = "log",
        max_bytes: int = MAX_LOG_BYTES,
    ) -> None:
        if flush_seconds <= 0 or chunk_bytes <= 0:
            raise ValueError("flush_seconds and chunk_bytes must be positive")
        self._sink = sink
        self._name = name
        self._mask = mask
        self._chunk_bytes = chunk_bytes
        self._lock = threading.Lock()  # guards the buffers and counters below
        self._upload_lock = threading.Lock()  # one upload at a time, so the sink keeps a chunk's latest version
        self._close_lock = threading.Lock()
        self._current: mmap.mmap | None = None  # the chunk being filled, mapped at its first byte ...
        self._size = 0  # ... and how much of it is filled
        self._index = 0  # its number
        self._stored_size = 0  # how much of it the sink has
        self._offered = False  # whether the sink was handed a version of it (it may hold one, even if the call failed)
        self._full: deque[tuple[int, mmap.mmap]] = deque()  # full chunks the sink does not have yet
        self._lines = 0
        self._max_bytes = max_bytes
        self._capped = False  # output reached max_bytes: only the runner's own lines are kept from then on
        self._closed = False  # no more writes
        self._keep_tail = False  # the chunk being filled is the caller's to send, not the sink's
        self._end: LogEnd | None = None  # once every chunk is sent (but a tail kept back)
        self._abandoned = False  # the sink will never take more: writers stop waiting for it
        self._stop = threading.Event()
        self._timer = threading.Thread(
            target=self._flush_periodically, args=(flush_seconds,), name=f"log {name}", daemon=True
        )
        self._timer.start()

    @property
    def lines(self) -> int:
        """Lines written so far (a line cut at MAX_LINE_BYTES counts as several)."""
        with self._lock:
            return self._lines

    def add_secrets(self, *secrets: str) -> None:
        """Mask these too in every line written from now on (an ID token the job was handed, say)."""
        self._mask.add(*secrets)

    def mask(self, text: str) -> str:
        """``text`` as the log would keep it: its secrets masked (a message said beside the log, say)."""
        return self._mask(text)

    def write(self, line: str, own: bool = False) -> None:
        """Append one line of output, given without its newline; it is masked before anything is kept. Past
        ``max_bytes`` output is left out, saying so once; the runner's ``own`` lines have a little room beyond."""
        if self._abandoned or (self._capped and not own):
            return  # before any work on it: the runner is outside the job's CPU limit, and output past the cap is
            # cheap to drop
        pieces = split_line(self._mask(line))
        with self._lock:
            if self._closed:
                raise ValueError(f"the {self._name} is closed")
            written = self._index * self._chunk_bytes + self._size
            if written >= self._max_bytes + (OWN_LINES_BYTES if own else 0):
                if self._capped or own:
                    return
                pieces = [CAPPED.format(megabytes=self._max_bytes // (1024 * 1024)).encode()]
                self._capped = True
            for piece in pieces:
                self._append(piece + b"\n")
            self._lines += len(pieces)
            has_full = bool(self._full)
        if has_full:
            self._store_full_chunks()

    def flush(self) -> None:
        """Send what is buffered now; raises if the sink refuses (everything is kept for the next try)."""
        self._push()

    def abandon(self) -> None:
        """The sink will take nothing more (the job's token is gone): writers no longer wait for it."""
        self._abandoned = True

    def close(self) -> int:
        """Send what is left; how many chunks the log has. Raises if the sink refuses, and may be called again."""
        return self._close(max_tail_bytes=0).chunks

    def close_keeping_tail(self, max_tail_bytes: int) -> LogEnd:
        """Close the log as ``close`` does, but keep back the chunk being filled if it holds at most
        ``max_tail_bytes``: the caller's last word carries it, which saves the sink a call. Raises if the sink
        refuses, and may be called again."""
        return self._close(max_tail_bytes)

    def _close(self, max_tail_bytes: int) -> LogEnd:
        with self._close_lock:
            if self._end is not None:
                return self._end
            with self._lock:
                self._closed = True
                self._keep_tail = 0 < self._size <= max_tail_bytes  # from now on no push sends the chunk being filled
                chunks = self._index + (1 if self._size else 0)
            self._stop.set()
            self._timer.join()
            self._push()
            with self._lock:
                tail = self._current[: self._size] if self._keep_tail and self._current is not None else None
                self._end = LogEnd(chunks, tail, self._offered if tail is not None else chunks > 0)
                self._current = None
            return self._end

    def _append(self, data: bytes) -> None:
        """Add ``data`` to the current chunk, moving on to the next one each time a chunk is full (holding _lock)."""
        while data:
            if self._current is None:
                self._current = mmap.mmap(-1, self._chunk_bytes)
            room = self._chunk_bytes - self._size
            piece = data[:room]
            self._current[self._size : self._size + len(piece)] = piece  # in place: the buffer never moves
            self._size += len(piece)
            data = data[room:]
            if self._size == self._chunk_bytes:
                self._full.append((self._index, self._current))
                self._current, self._size, self._stored_size, self._offered = None, 0, 0, False
                self._index += 1

    def _push(self) -> None:
        """Send the full chunks the sink lacks, in order, then the current chunk if it grew; sink errors propagate."""
        with self._upload_lock:
            while True:
                with self._lock:
                    if not self._full:
                        break
                    index, buffer = self._full[0]
                self._sink(index, memoryview(buffer))
                with self._lock:
                    self._full.popleft()
                del buffer  # the sink has it: its memory goes back now, not when this push ends
            with self._lock:
                index, size, current = self._index, self._size, self._current
                grew = current is not None and size != self._stored_size and not self._keep_tail
                self._offered = self._offered or grew
            if current is not None and grew:
                # only bytes before ``size`` are read, and the writer writes after them (or into a new buffer)
                self._sink(index, memoryview(current)[:size])
                with self._lock:
                    if self._index == index:
                        self._stored_size = size

    def _try_push(self) -> bool:
        """Push, logging (never the log's content) rather than raising when the sink fails: the job goes on."""
        try:
            self._push()
        except Exception as error:  # the sink's own errors (S3, HTTP): kept for the next try
            logger.warning("Could not store the %s, trying again later: %s", self._name, error)
            return False
        return True

    def _store_full_chunks(self) -> None:
        """Store full chunks now; while the sink refuses them and too many wait in memory, the writer waits too."""
        delay = 0.5
        while not self._try_push():
            with self._lock:
                if len(self._full) <= MAX_WAITING_CHUNKS or self._abandoned:
                    return
            time.sleep(delay)
            delay = min(delay * 2, MAX_RETRY_SECONDS)

    def _flush_periodically(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            self._try_push()


def split_line(text: str) -> list[bytes]:
    """The lines of ``text`` in UTF-8, each cut into pieces of at most MAX_LINE_BYTES between characters."""
    pieces: list[bytes] = []
    for line in text.split("\n"):
        data = line.encode("utf-8", errors="replace")  # lone surrogates (undecodable output) become "?"
        start = 0
        while len(data) - start > MAX_LINE_BYTES:
            cut = start + MAX_LINE_BYTES
            while data[cut] & 0xC0 == 0x80:  # a continuation byte: the cut would split a character
                cut -= 1
            pieces.append(data[start:cut])
            start = cut
        pieces.append(data[start:])
    return pieces
