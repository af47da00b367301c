"""A job's log in S3: numbered chunks while the job runs, then the single object ``log.txt``.

{job_prefix}log/chunks/000000, 000001, ...   the running log, in order; every chunk but the last is full
{job_prefix}log/log.txt                      the finished log (the chunks are deleted once it exists)

S3 has no append, so the runner re-uploads its current chunk as it grows and starts a new one when it
is full (see chalicelib/runner/logstream.py). Readers never hold more than MAX_INLINE_LOG in memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import mmap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.store.blobs import delete_prefix

MAX_INLINE_LOG = 5 * 1024 * 1024  # bigger logs are not sent through Lambda/API Gateway
# Lambda's response is at most 6 MB of JSON, the body escaped in it (an escape sequence is up to 6 characters for
# one byte of log); headers take the rest.
MAX_RESPONSE_BODY = 5_500_000
MIN_PART_BYTES = 5 * 1024 * 1024  # S3's smallest multipart part, except the last
REDIRECT_SECONDS = 60
CONTENT_TYPE = "text/plain; charset=utf-8"
TRUNCATION_NOTE = "[The first {skipped} bytes of this log are available when the job finishes.]\n"

Buffer = bytes | bytearray | memoryview | mmap.mmap

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ByteRange:
    """Bytes ``first`` to ``last`` of a log (inclusive; ``last`` None: to its end), or with ``first`` None,
    its last ``last`` bytes: what ``Range: bytes=first-last`` or ``bytes=-last`` asks for."""

    first: int | None
    last: int | None

    def within(self, total: int) -> tuple[int, int] | None:
        """The bytes ``[start, end)`` of a log of ``total`` bytes this range asks for; None: none exists."""
        if self.first is None:
            return (max(total - (self.last or 0), 0), total) if self.last and total else None
        if self.first >= total:
            return None
        return self.first, total if self.last is None else min(self.last + 1, total)


@dataclass(frozen=True)
class LogPart:
    """Which bytes of the log a reply to a range holds: ``[start, end)`` of ``total`` (so far, while it runs).
    ``start == end``: the log has none of the bytes asked for."""

    start: int
    end: int
    total: int


@dataclass(frozen=True)
class LogReply:
    """What the API sends for a job's log: the text inline (the whole log, its tail, or a part), or a redirect."""

    text: bytes | None  # the log to send inline (text/plain), or None
    redirect_url: str | None  # a short-lived presigned GET URL to send as a 302, or None
    part: LogPart | None = None  # which bytes ``text`` holds, when a range was asked for


@dataclass(frozen=True)
class _Chunk:
    key: str
    size: int


class LogIncomplete(Exception):
    """The chunks in S3 are not the ones the runner wrote, so no finished log can be made of them."""


def job_log_key(job_prefix: str) -> str:
    """The finished log of the job under ``job_prefix``."""
    return f"{job_prefix}log/log.txt"


def _chunks_prefix(job_prefix: str) -> str:
    return f"{job_prefix}log/chunks/"


def put_chunk(job_prefix: str, index: int, body: Buffer) -> None:
    """Store (or replace) chunk ``index`` of a running log; ``body`` is read in place, never copied whole."""
    with BufferReader(body) as reader:
        aws.client("s3").put_object(
            Bucket=settings().bucket,
            Key=f"{_chunks_prefix(job_prefix)}{index:06d}",
            Body=reader,
            ContentType=CONTENT_TYPE,
        )


class BufferReader(io.RawIOBase):
    """A seekable read-only stream over a buffer (bytes, a memoryview, an mmap), for botocore to send from.

    Given bytes, botocore joins the request's headers and body into one new string before sending: a second
    copy of every chunk. A stream is sent in small blocks, straight from the buffer.
    """

    def __init__(self, buffer: Buffer) -> None:
        self._view = memoryview(buffer).cast("B")
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` bytes (all that are left when negative), copied once."""
        end = len(self._view) if size is None or size < 0 else self._position + size
        piece = self._view[self._position : end].tobytes()
        self._position += len(piece)
        return piece

    def readinto(self, target: Any) -> int:
        into = memoryview(target).cast("B")
        piece = self._view[self._position : self._position + len(into)]
        into[: len(piece)] = piece
        self._position += len(piece)
        return len(piece)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: len(self._view)}[whence]
        self._position = max(base + offset, 0)
        return self._position

    def tell(self) -> int:
        return self._position

    def close(self) -> None:
        """Let go of the buffer (botocore may keep the stream a while), so its memory can be freed."""
        self._view.release()
        super().close()


def seal_log(job_prefix: str, chunk_count: int) -> None:
    """Make chunks ``0 .. chunk_count-1`` the single object log.txt, then drop the chunks.

    Raises LogIncomplete if one of them is missing, and ClientError if S3 refuses; either way the
    chunks stay, so sealing can be tried again.
    """
    s3 = aws.client("s3")
    bucket = settings().bucket
    key = job_log_key(job_prefix)
    chunks = _list_chunks(job_prefix)[:chunk_count]
    expected = [f"{_chunks_prefix(job_prefix)}{index:06d}" for index in range(chunk_count)]
    if [chunk.key for chunk in chunks] != expected:
        raise LogIncomplete(f"{len(chunks)} of the {chunk_count} chunks of {key} are in S3")
    if not chunks:
        s3.put_object(Bucket=bucket, Key=key, Body=b"", ContentType=CONTENT_TYPE)
    elif len(chunks) == 1:
        s3.copy_object(
            Bucket=bucket,
            Key=key,
            CopySource={"Bucket": bucket, "Key": chunks[0].key},
            MetadataDirective="REPLACE",
            ContentType=CONTENT_TYPE,
        )
    elif sum(chunk.size for chunk in chunks) < MIN_PART_BYTES:
        body = b"".join(_read_range(chunk.key, 0, chunk.size) for chunk in chunks)  # < 5 MiB in all
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=CONTENT_TYPE)
    else:
        _compose_multipart(key, chunks)
    try:
        delete_prefix(_chunks_prefix(job_prefix))
    except ClientError as error:  # the log is whole; leftover chunks go with the build's prefix
        logger.warning("Could not delete the chunks of %s: %s", key, error)


def _compose_multipart(key: str, chunks: list[_Chunk]) -> None:
    """One object from many chunks: full-size chunks and the last are copied inside S3, smaller ones (an agent's)
    buffered into parts.

    The buffer holds less than one part before a chunk is added, so memory stays under a part plus a chunk.
    """
    s3 = aws.client("s3")
    bucket = settings().bucket
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType=CONTENT_TYPE)["UploadId"]
    parts: list[dict[str, Any]] = []
    buffer = bytearray()

    def add_part(**source: Any) -> None:
        number = len(parts) + 1
        if "Body" in source:
            with BufferReader(source.pop("Body")) as body:
                reply = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body)
            etag = reply["ETag"]
        else:
            reply = s3.upload_part_copy(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, **source)
            etag = reply["CopyPartResult"]["ETag"]
        parts.append({"PartNumber": number, "ETag": etag})

    try:
        for number, chunk in enumerate(chunks, start=1):
            if chunk.size == 0:
                continue
            # the last part may be smaller than MIN_PART_BYTES: a runner's last chunk is copied too, not read back
            if not buffer and (chunk.size >= MIN_PART_BYTES or number == len(chunks)):
                add_part(CopySource={"Bucket": bucket, "Key": chunk.key}, CopySourceRange=f"bytes=0-{chunk.size - 1}")
                continue
            buffer += _read_range(chunk.key, 0, chunk.size)
            if len(buffer) >= MIN_PART_BYTES:
                add_part(Body=buffer)
                buffer = bytearray()
        if buffer:  # the last part may be smaller than MIN_PART_BYTES
            add_part(Body=buffer)
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    except BaseException:
        with contextlib.suppress(BotoCoreError, ClientError):  # the error that stopped the upload is the one to raise
            s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        raise


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
    finished = _size_of(key)
    if finished is not None and finished > MAX_INLINE_LOG:
        return LogReply(None, _download_url(key))
    pieces = [_Chunk(key, finished)] if finished is not None else _list_chunks(job_prefix)
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


def _part(pieces: list[_Chunk], total: int, wanted: ByteRange, budget: int) -> LogReply:
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


def _running_tail(chunks: list[_Chunk], total: int, budget: int) -> bytes:
    """The last lines of a running log that fit in ``budget`` bytes, after a note saying what is left out."""
    budget -= len(TRUNCATION_NOTE.format(skipped=total))
    if total <= budget:
        return _read_span(chunks, 0, total)
    tail = _read_span(chunks, total - budget - 1, total)  # one byte more, to see whether the tail starts a line
    newline = tail.find(b"\n")
    tail = tail[newline + 1 :] if newline >= 0 else tail[1:].lstrip(bytes(range(0x80, 0xC0)))
    note = TRUNCATION_NOTE.format(skipped=total - len(tail)).encode()
    return note + tail


def _read_span(pieces: list[_Chunk], start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of the log that ``pieces`` make, in order."""
    parts: list[bytes] = []
    offset = 0
    for piece in pieces:
        if offset < end and offset + piece.size > start:
            parts.append(_read_range(piece.key, max(start - offset, 0), min(end - offset, piece.size)))
        offset += piece.size
    return b"".join(parts)


def delete_log(job_prefix: str) -> None:
    """Remove the job's log, running or finished."""
    delete_prefix(f"{job_prefix}log/")


def _list_chunks(job_prefix: str) -> list[_Chunk]:
    """The chunks of a running log, in order (by number, not by key, should a log pass a million chunks)."""
    s3 = aws.client("s3")
    prefix = _chunks_prefix(job_prefix)
    chunks = [
        _Chunk(entry["Key"], entry["Size"])
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=settings().bucket, Prefix=prefix)
        for entry in page.get("Contents", [])
        if entry["Key"][len(prefix) :].isdigit()
    ]
    return sorted(chunks, key=lambda chunk: int(chunk.key[len(prefix) :]))


def _size_of(key: str) -> int | None:
    try:
        size: int = aws.client("s3").head_object(Bucket=settings().bucket, Key=key)["ContentLength"]
    except ClientError as error:
        if error.response["Error"]["Code"] in ("404", "NoSuchKey"):
            return None
        raise
    return size


def _read_range(key: str, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` (exclusive) of an object: a chunk may have grown since it was listed."""
    if end <= start:
        return b""
    reply = aws.client("s3").get_object(Bucket=settings().bucket, Key=key, Range=f"bytes={start}-{end - 1}")
    body: bytes = reply["Body"].read()
    return body
