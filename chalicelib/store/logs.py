"""A job's log in S3: numbered chunks while the job runs, then the single object ``log.txt``.

{job_prefix}log/chunks/000000, 000001, ...   the running log, in order; every chunk but the last is full
{job_prefix}log/log.txt                      the finished log (the chunks are deleted once it exists)

S3 has no append, so a log stream re-sends its current chunk as it grows and starts a new one when it is
full (see chalicelib/protocol/logstream.py): a runner through the job protocol, which stores each chunk here.
A runner's finish carries its last chunk: a log of one chunk it never sent goes straight to log.txt.
How the API reads it is store/log_reads.py.
"""

from __future__ import annotations

import contextlib
import io
import logging
import mmap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.store.blobs import delete_keys, delete_prefix

MIN_PART_BYTES = 5 * 1024 * 1024  # S3's smallest multipart part, except the last
CONTENT_TYPE = "text/plain; charset=utf-8"

Buffer = bytes | bytearray | memoryview | mmap.mmap

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chunk:
    """One numbered object of a running log (or the finished log itself), with its size when listed."""

    key: str
    size: int


class LogIncomplete(Exception):
    """The chunks in S3 are not the ones the runner wrote, so no finished log can be made of them."""


def job_log_key(job_prefix: str) -> str:
    """The finished log of the job under ``job_prefix``."""
    return f"{job_prefix}log/log.txt"


def _chunks_prefix(job_prefix: str) -> str:
    return f"{job_prefix}log/chunks/"


def _chunk_key(job_prefix: str, index: int) -> str:
    return f"{_chunks_prefix(job_prefix)}{index:06d}"


def put_chunk(job_prefix: str, index: int, body: Buffer) -> None:
    """Store (or replace) chunk ``index`` of a running log; ``body`` is read in place, never copied whole."""
    _put(_chunk_key(job_prefix, index), body)


def _put(key: str, body: Buffer) -> None:
    with BufferReader(body) as reader:
        aws.client("s3").put_object(Bucket=settings().bucket, Key=key, Body=reader, ContentType=CONTENT_TYPE)


def chunk_sink(job_prefix: str) -> Callable[[int, Buffer], None]:
    """A log stream's sink that stores its chunks here: for the logs the service writes itself (deployments)."""
    return lambda index, body: put_chunk(job_prefix, index, body)


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


def seal_log(job_prefix: str, chunk_count: int, tail: bytes | None = None, tail_sent: bool = True) -> None:
    """Make chunks ``0 .. chunk_count-1`` the single object log.txt, then drop the chunks.

    ``tail`` is the last of them when its writer kept it back rather than stored it (a runner's finish carries
    it): a log of that one chunk becomes log.txt as it is, with nothing to list, copy or delete unless a version
    of it was sent before (``tail_sent``); a longer log's tail is stored as its chunk once the others are found.
    Raises LogIncomplete if one of them is missing, and ClientError if S3 refuses; either way the chunks stay,
    so sealing can be tried again.
    """
    key = job_log_key(job_prefix)
    if tail is not None and chunk_count == 1 and not tail_sent:
        _put(key, tail)  # the writer says no chunk was sent: one it sent anyway stays under its own prefix
        return
    listed = list_chunks(job_prefix)
    stored = chunk_count - 1 if tail is not None else chunk_count
    chunks = listed[:stored]
    if [chunk.key for chunk in chunks] != [_chunk_key(job_prefix, index) for index in range(stored)]:
        raise LogIncomplete(f"{len(chunks)} of the {stored} chunks of {key} are in S3")
    if tail is not None and stored == 0:
        _put(key, tail)
    else:
        if tail is not None:
            put_chunk(job_prefix, stored, tail)
            chunks.append(Chunk(_chunk_key(job_prefix, stored), len(tail)))
        _join(key, chunks)
    try:  # listed once: the chunks are the service's to write
        delete_keys(sorted({chunk.key for chunk in listed} | {chunk.key for chunk in chunks}))
    except ClientError as error:  # the log is whole; leftover chunks go with the build's prefix
        logger.warning("Could not delete the chunks of %s: %s", key, error)


def _join(key: str, chunks: list[Chunk]) -> None:
    """The object ``key`` made of ``chunks``, in order."""
    s3 = aws.client("s3")
    bucket = settings().bucket
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
        body = b"".join(read_range(chunk.key, 0, chunk.size) for chunk in chunks)  # < 5 MiB in all
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=CONTENT_TYPE)
    else:
        _compose_multipart(key, chunks)


def _compose_multipart(key: str, chunks: list[Chunk]) -> None:
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
            buffer += read_range(chunk.key, 0, chunk.size)
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


def append_line(job_prefix: str, line: str) -> int | None:
    """Add ``line`` to a running log whose writer is gone, as a chunk of its own after the last: its number (None:
    the log is finished already, and stays as it is). The line starts a line of its own."""
    if size_of(job_log_key(job_prefix)) is not None:
        return None
    chunks = list_chunks(job_prefix)
    prefix = _chunks_prefix(job_prefix)
    index = int(chunks[-1].key[len(prefix) :]) + 1 if chunks else 0
    text = line + "\n"
    if chunks and chunks[-1].size and read_range(chunks[-1].key, chunks[-1].size - 1, chunks[-1].size) != b"\n":
        text = "\n" + text
    put_chunk(job_prefix, index, text.encode())
    return index


def drop_chunk(job_prefix: str, index: int) -> None:
    """Remove chunk ``index`` of a running log (a line added for an ending that did not happen)."""
    delete_keys([_chunk_key(job_prefix, index)])


def write_log(job_prefix: str, text: bytes) -> None:
    """Make ``text`` the job's finished log: for a job the service ends itself, that never ran."""
    _put(job_log_key(job_prefix), text)


def delete_log(job_prefix: str) -> None:
    """Remove the job's log, running or finished."""
    delete_prefix(f"{job_prefix}log/")


def list_chunks(job_prefix: str) -> list[Chunk]:
    """The chunks of a running log, in order (by number, not by key, should a log pass a million chunks)."""
    s3 = aws.client("s3")
    prefix = _chunks_prefix(job_prefix)
    chunks = [
        Chunk(entry["Key"], entry["Size"])
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=settings().bucket, Prefix=prefix)
        for entry in page.get("Contents", [])
        if entry["Key"][len(prefix) :].isdigit()
    ]
    return sorted(chunks, key=lambda chunk: int(chunk.key[len(prefix) :]))


def size_of(key: str) -> int | None:
    """The size of an object, or None when there is none."""
    try:
        size: int = aws.client("s3").head_object(Bucket=settings().bucket, Key=key)["ContentLength"]
    except ClientError as error:
        if error.response["Error"]["Code"] in ("404", "NoSuchKey"):
            return None
        raise
    return size


def read_range(key: str, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` (exclusive) of an object: a chunk may have grown since it was listed."""
    if end <= start:
        return b""
    reply = aws.client("s3").get_object(Bucket=settings().bucket, Key=key, Range=f"bytes={start}-{end - 1}")
    body: bytes = reply["Body"].read()
    return body
