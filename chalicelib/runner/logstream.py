"""A running job's log: masked line by line, then streamed to S3 in chunks that the API can read meanwhile."""

from __future__ import annotations

import base64
import logging
import mmap
import re
import threading
import time
from collections import deque
from collections.abc import Iterable

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.store import logs

MASK = "[secure]"
MIN_SECRET_CHARS = 3  # shorter values would mask every "a" or "10" of the log, destroying it
MIN_ENCODED_SECRET_CHARS = 6  # the base64 form of shorter values is too likely to occur by chance
MAX_LINE_BYTES = 64 * 1024  # a runaway line is cut into lines of this size
MAX_WAITING_CHUNKS = 1  # full chunks kept while S3 refuses them; beyond this, writers wait for S3
MAX_RETRY_SECONDS = 10.0

logger = logging.getLogger(__name__)


class SecretMask:
    """Replaces every secret value in text with "[secure]".

    Longer secrets are masked first, so a secret containing another is masked whole. Each line of a
    multi-line secret (a key file, say) is masked on its own too, since logs arrive line by line; so is
    the standard base64 form of secrets of 6 characters or more. Values of fewer than 3 characters
    (ignoring surrounding whitespace) are not masked at all: masking "a" or "1" would destroy the log.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        values: set[str] = set()
        for secret in secrets:
            for value in (secret, *secret.splitlines()):
                if len(value.strip()) >= MIN_SECRET_CHARS:
                    values.update((value, value.strip()))  # a shell may well drop the surrounding spaces
            if len(secret.strip()) >= MIN_ENCODED_SECRET_CHARS:
                values.add(base64.b64encode(secret.encode()).decode())
        longest_first = sorted(values, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, longest_first))) if longest_first else None

    def __call__(self, text: str) -> str:
        return self._pattern.sub(MASK, text) if self._pattern else text


class LogStream:
    """A job's log, written line by line, visible through the API within seconds, never all in memory.

    The log is a sequence of chunks in S3 (S3 has no append): the current chunk is kept in memory and
    stored again whole every ``flush_seconds`` by a background thread; once it holds ``chunk_bytes`` it
    is stored a last time and a new chunk begins. ``close`` makes the chunks one object.

    Memory stays near one chunk whatever the log's size: a chunk is filled in place, in an anonymous
    mapping of its full size (memory is taken only as it is written, and given back once S3 has the full
    chunk), and uploads read it there rather than a copy (the writer only writes past what an upload reads).
    The writer itself stores each full chunk, so it does not start filling the next until S3 has it.
    """

    def __init__(
        self, job_prefix: str, mask: SecretMask, flush_seconds: float = 2.0, chunk_bytes: int = 5 * 1024 * 1024
    ) -> None:
        if flush_seconds <= 0 or chunk_bytes <= 0:
            raise ValueError("flush_seconds and chunk_bytes must be positive")
        self._job_prefix = job_prefix
        self._mask = mask
        self._chunk_bytes = chunk_bytes
        self._lock = threading.Lock()  # guards the buffers and counters below
        self._upload_lock = threading.Lock()  # one upload at a time, so S3 keeps a chunk's latest version
        self._close_lock = threading.Lock()
        self._current: mmap.mmap | None = None  # the chunk being filled, mapped at its first byte ...
        self._size = 0  # ... and how much of it is filled
        self._index = 0  # its number
        self._stored_size = 0  # how much of it S3 has
        self._full: deque[tuple[int, mmap.mmap]] = deque()  # full chunks S3 does not have yet
        self._lines = 0
        self._closed = False  # no more writes
        self._sealed = False  # the log is one object in S3
        self._stop = threading.Event()
        self._timer = threading.Thread(
            target=self._flush_periodically, args=(flush_seconds,), name=f"log {job_prefix}", daemon=True
        )
        self._timer.start()

    @property
    def lines(self) -> int:
        """Lines written so far (a line cut at MAX_LINE_BYTES counts as several)."""
        with self._lock:
            return self._lines

    def write(self, line: str) -> None:
        """Append one line of output, given without its newline; it is masked before anything is kept."""
        pieces = split_line(self._mask(line))
        with self._lock:
            if self._closed:
                raise ValueError(f"the log of {self._job_prefix} is closed")
            for piece in pieces:
                self._append(piece + b"\n")
            self._lines += len(pieces)
            has_full = bool(self._full)
        if has_full:
            self._store_full_chunks()

    def flush(self) -> None:
        """Store what is buffered in S3 now; raises if S3 refuses (everything is kept for the next try)."""
        self._push()

    def close(self) -> None:
        """Flush, then make the finished log one object; raises if that fails, and may be called again."""
        with self._close_lock:
            if self._sealed:
                return
            with self._lock:
                self._closed = True
            self._stop.set()
            self._timer.join()
            self._push()
            with self._lock:
                chunk_count = self._index + (1 if self._size else 0)
            logs.seal_log(self._job_prefix, chunk_count)
            self._sealed = True
            with self._lock:
                self._current = None

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
                self._current, self._size, self._stored_size = None, 0, 0
                self._index += 1

    def _push(self) -> None:
        """Store the full chunks S3 lacks, in order, then the current chunk if it grew; S3 errors propagate."""
        with self._upload_lock:
            while True:
                with self._lock:
                    if not self._full:
                        break
                    index, buffer = self._full[0]
                logs.put_chunk(self._job_prefix, index, buffer)
                with self._lock:
                    self._full.popleft()
                del buffer  # S3 has it: its memory goes back now, not when this push ends
            with self._lock:
                index, size, current = self._index, self._size, self._current
                grew = current is not None and size != self._stored_size
            if current is not None and grew:
                # only bytes before ``size`` are read, and the writer writes after them (or into a new buffer)
                logs.put_chunk(self._job_prefix, index, memoryview(current)[:size])
                with self._lock:
                    if self._index == index:
                        self._stored_size = size

    def _try_push(self) -> bool:
        """Push, logging (never the log's content) rather than raising when S3 fails: the job goes on."""
        try:
            self._push()
        except (BotoCoreError, ClientError) as error:
            logger.warning("Could not store the log of %s, trying again later: %s", self._job_prefix, error)
            return False
        return True

    def _store_full_chunks(self) -> None:
        """Store full chunks now; while S3 refuses them and too many wait in memory, the writer waits too."""
        delay = 0.5
        while not self._try_push():
            with self._lock:
                if len(self._full) <= MAX_WAITING_CHUNKS:
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
