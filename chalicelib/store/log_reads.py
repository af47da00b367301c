"""A job's log as the API serves it (store/logs.py says how it is stored): inline when small enough, else a
redirect to S3 or, while the job runs, its tail; or the bytes a ``Range`` asks for. Readers never hold more than
MAX_INLINE_LOG in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.core.logs import ByteRange, LogPart, LogReply
from chalicelib.store import logs
from chalicelib.store.logs import CONTENT_TYPE, Chunk, job_log_key

MAX_INLINE_LOG = 5 * 1024 * 1024  # bigger logs are not sent through Lambda/API Gateway
# Lambda's response is at most 6 MB of JSON, the body escaped in it (an escape sequence is up to 6 characters for
# one byte of log); headers take the rest.
MAX_RESPONSE_BODY = 5_500_000
REDIRECT_SECONDS = 60
TRUNCATION_NOTE = "[The first {skipped} bytes of this log are available when the job finishes.]\n"


def read_log(job_prefix: str, wanted: ByteRange | None = None) -> LogReply:
    """The job's log as the API serves it: inline when small enough, else a redirect or (running) its tail.

    With ``wanted``, only those bytes (at most MAX_INLINE_LOG of them, widened to whole UTF-8 characters), so a
    client can follow a running log from where it left off; a finished log too big to send is a redirect still,
    and S3 serves the range.
    """
    for _ in range(2):  # the job may finish (and its chunks vanish) between listing and reading them
        try:
            return _read_log_once(job_prefix, wanted)
        except ClientError as error:
            if error.response["Error"]["Code"] not in ("NoSuchKey", "404"):
                raise
    return _read_log_once(job_prefix, wanted)


def _read_log_once(job_prefix: str, wanted: ByteRange | None) -> LogReply:
    key = job_log_key(job_prefix)
    finished = logs.size_of(key)
    if finished is not None and finished > MAX_INLINE_LOG:
        return LogReply(None, _download_url(key))
    pieces = [Chunk(key, finished)] if finished is not None else logs.list_chunks(job_prefix)
    total = sum(piece.size for piece in pieces)
    if wanted is not None:
        return _fitting(lambda budget: _part(pieces, total, wanted, budget))
    if total <= MAX_INLINE_LOG:
        whole = _read_span(pieces, 0, total)
        if fits_a_response(whole):
            return LogReply(whole, None)
        if finished is not None:
            return LogReply(None, _download_url(key))
    return _fitting(lambda budget: LogReply(_running_tail(pieces, total, budget), None))


def fits_a_response(text: bytes) -> bool:
    """Whether the log text, JSON-escaped as Lambda sends it, fits in MAX_RESPONSE_BODY."""
    if len(text) * 6 <= MAX_RESPONSE_BODY:  # escaping makes at most six characters of a byte
        return True
    return len(json.dumps(text.decode("utf-8", errors="replace"))) <= MAX_RESPONSE_BODY


def _fitting(reply_within: Callable[[int], LogReply]) -> LogReply:
    """The reply of at most MAX_INLINE_LOG bytes, or of half as many, and so on, until it fits a response (a log
    of colour codes or other escaped characters takes several times its size in one)."""
    budget = MAX_INLINE_LOG
    while True:
        reply = reply_within(budget)
        if reply.text is None or fits_a_response(reply.text):
            return reply
        budget //= 2


def _download_url(key: str) -> str:
    """A short-lived presigned GET of the finished log."""
    return aws.client("s3").generate_presigned_url(
        "get_object",
        Params={"Bucket": settings().bucket, "Key": key, "ResponseContentType": CONTENT_TYPE},
        ExpiresIn=REDIRECT_SECONDS,
    )


def _part(pieces: list[Chunk], total: int, wanted: ByteRange, budget: int) -> LogReply:
    """The bytes ``wanted`` of the log, at most ``budget`` of them, widened to whole characters."""
    span = wanted.within(total)
    if span is None:
        return LogReply(None, None, LogPart(total, total, total))
    start, end = span[0], min(span[1], span[0] + budget)
    # a UTF-8 character is at most 4 bytes: a start or end inside one moves by 3 at most to take it whole
    read_from, read_to = max(start - 3, 0), min(end + 3, total)
    data = _read_span(pieces, read_from, read_to)
    while start > read_from and data[start - read_from] & 0xC0 == 0x80:
        start -= 1
    while end < read_to and data[end - read_from] & 0xC0 == 0x80:
        end += 1
    return LogReply(data[start - read_from : end - read_from], None, LogPart(start, end, total))


def _running_tail(chunks: list[Chunk], total: int, budget: int) -> bytes:
    """The last lines of a running log that fit in ``budget`` bytes, after a note saying what is left out."""
    budget -= len(TRUNCATION_NOTE.format(skipped=total))
    if total <= budget:
        return _read_span(chunks, 0, total)
    tail = _read_span(chunks, total - budget - 1, total)  # one byte more, to see whether the tail starts a line
    newline = tail.find(b"\n")
    tail = tail[newline + 1 :] if newline >= 0 else tail[1:].lstrip(bytes(range(0x80, 0xC0)))
    note = TRUNCATION_NOTE.format(skipped=total - len(tail)).encode()
    return note + tail


def _read_span(pieces: list[Chunk], start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of the log that ``pieces`` make, in order."""
    parts: list[bytes] = []
    offset = 0
    for piece in pieces:
        if offset < end and offset + piece.size > start:
            parts.append(logs.read_range(piece.key, max(start - offset, 0), min(end - offset, piece.size)))
        offset += piece.size
    return b"".join(parts)
