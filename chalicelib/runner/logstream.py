"""A running job's log: masked line by line, then streamed to S3 in chunks that the API can read meanwhile."""

from __future__ import annotations

import base64
import logging
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
        self._current = bytearray()  # the chunk being filled
        self._index = 0  # its number
        self._changes = 0  # appends to it so far ...
        self._stored_changes = 0  # ... and how many of them S3 has
        self._full: deque[tuple[int, bytes]] = deque()  # full chunks S3 does not have yet
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
                chunk_count = self._index + (1 if self._current else 0)
            logs.seal_log(self._job_prefix, chunk_count)
            self._sealed = True
            with self._lock:
                self._current = bytearray()

    def _append(self, data: bytes) -> None:
        """Add ``data`` to the current chunk, moving on to the next one each time a chunk is full (holding _lock)."""
        while data:
            room = self._chunk_bytes - len(self._current)
            self._current += data[:room]
            data = data[room:]
            self._changes += 1
            if len(self._current) == self._chunk_bytes:
                self._full.append((self._index, bytes(self._current)))
                self._current = bytearray()
                self._index += 1
                self._changes = self._stored_changes = 0

    def _push(self) -> None:
        """Store the full chunks S3 lacks, in order, then the current chunk if it changed; S3 errors propagate."""
        with self._upload_lock:
            while True:
                with self._lock:
                    if not self._full:
                        break
                    index, body = self._full[0]
                logs.put_chunk(self._job_prefix, index, body)
                with self._lock:
                    self._full.popleft()
            with self._lock:
                index, changes = self._index, self._changes
                body = bytes(self._current) if changes != self._stored_changes else b""
            if body:
                logs.put_chunk(self._job_prefix, index, body)
                with self._lock:
                    if self._index == index:
                        self._stored_changes = changes

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
