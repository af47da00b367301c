"""A job's log in S3: numbered chunks while the job runs, then the single object ``log.txt``.

{job_prefix}log/chunks/000000, 000001, ...   the running log, in order; every chunk but the last is full
{job_prefix}log/log.txt                      the finished log (the chunks are deleted once it exists)

S3 has no append, so the runner re-uploads its current chunk as it grows and starts a new one when it
is full (see chalicelib/runner/logstream.py). Readers never hold more than MAX_INLINE_LOG in memory.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.store.blobs import delete_prefix

MAX_INLINE_LOG = 5 * 1024 * 1024  # bigger logs are not sent through Lambda/API Gateway
MIN_PART_BYTES = 5 * 1024 * 1024  # S3's smallest multipart part, except the last
REDIRECT_SECONDS = 60
CONTENT_TYPE = "text/plain; charset=utf-8"
TRUNCATION_NOTE = "[The first {skipped} bytes of this log are available when the job finishes.]\n"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LogReply:
    """What the API sends for a job's log: the text inline, or a redirect to it."""

    text: bytes | None  # the log to send inline (text/plain), or None
    redirect_url: str | None  # a short-lived presigned GET URL to send as a 302, or None


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


def put_chunk(job_prefix: str, index: int, body: bytes) -> None:
    """Store (or replace) chunk ``index`` of a running log."""
    aws.client("s3").put_object(
        Bucket=settings().bucket, Key=f"{_chunks_prefix(job_prefix)}{index:06d}", Body=body, ContentType=CONTENT_TYPE
    )


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
    """One object from many chunks: full-size chunks are copied inside S3, smaller ones buffered into parts.

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
            etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, **source)["ETag"]
        else:
            reply = s3.upload_part_copy(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, **source)
            etag = reply["CopyPartResult"]["ETag"]
        parts.append({"PartNumber": number, "ETag": etag})

    try:
        for chunk in chunks:
            if not buffer and chunk.size >= MIN_PART_BYTES:
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


def read_log(job_prefix: str) -> LogReply:
    """The job's log as the API serves it: inline when small enough, else a redirect or (running) its tail."""
    for _ in range(2):  # the job may finish (and its chunks vanish) between listing and reading them
        try:
            return _read_log_once(job_prefix)
        except ClientError as error:
            if error.response["Error"]["Code"] not in ("NoSuchKey", "404"):
                raise
    return _read_log_once(job_prefix)


def _read_log_once(job_prefix: str) -> LogReply:
    finished = _size_of(job_log_key(job_prefix))
    if finished is not None:
        return _finished_log(job_prefix, finished)
    chunks = _list_chunks(job_prefix)
    total = sum(chunk.size for chunk in chunks)
    if total <= MAX_INLINE_LOG:
        return LogReply(b"".join(_read_range(chunk.key, 0, chunk.size) for chunk in chunks), None)
    return LogReply(_running_tail(chunks, total), None)


def _finished_log(job_prefix: str, size: int) -> LogReply:
    key = job_log_key(job_prefix)
    if size <= MAX_INLINE_LOG:
        return LogReply(_read_range(key, 0, size), None)
    url = aws.client("s3").generate_presigned_url(
        "get_object",
        Params={"Bucket": settings().bucket, "Key": key, "ResponseContentType": CONTENT_TYPE},
        ExpiresIn=REDIRECT_SECONDS,
    )
    return LogReply(None, url)


def _running_tail(chunks: list[_Chunk], total: int) -> bytes:
    """The last lines of a running log that fit in MAX_INLINE_LOG, after a note saying what is left out."""
    budget = MAX_INLINE_LOG - len(TRUNCATION_NOTE.format(skipped=total))
    start = total - budget - 1  # one byte more, to see whether the tail starts a line
    pieces: list[bytes] = []
    offset = 0
    for chunk in chunks:
        end = offset + chunk.size
        if end > start:
            pieces.append(_read_range(chunk.key, max(start - offset, 0), chunk.size))
        offset = end
    tail = b"".join(pieces)
    newline = tail.find(b"\n")
    tail = tail[newline + 1 :] if newline >= 0 else tail[1:].lstrip(bytes(range(0x80, 0xC0)))
    note = TRUNCATION_NOTE.format(skipped=total - len(tail)).encode()
    return note + tail


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
