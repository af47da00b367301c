"""Build cache entries: one archive object per entry in a job's cache folder, described by user metadata."""

from __future__ import annotations

from datetime import datetime

from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.config import settings

_DELETE_BATCH = 1000  # delete_objects' limit


def cache_entry_metadata(key: str) -> dict[str, str] | None:
    """The user metadata of a cache entry (``x-amz-meta-`` names without the prefix); None when it is absent."""
    try:
        head = aws.client("s3").head_object(Bucket=settings().bucket, Key=key)
    except ClientError as error:
        if _is_missing(error):
            return None
        raise
    return dict(head.get("Metadata", {}))


def list_cache_keys(prefix: str) -> list[str]:
    """The keys of every cache entry under ``prefix`` (a job's cache folder)."""
    return [key for key, _, _ in list_cache_sizes(prefix)]


def list_cache_sizes(prefix: str) -> list[tuple[str, int, datetime]]:
    """Every cache entry under ``prefix`` (a project's cache), with its size and when it was stored."""
    paginator = aws.client("s3").get_paginator("list_objects_v2")
    return [
        (entry["Key"], int(entry["Size"]), entry["LastModified"])
        for page in paginator.paginate(Bucket=settings().bucket, Prefix=prefix)
        for entry in page.get("Contents", [])
    ]


def delete_cache_keys(keys: list[str]) -> None:
    """Delete the given cache entries (absent ones are no error)."""
    s3 = aws.client("s3")
    for start in range(0, len(keys), _DELETE_BATCH):
        batch = [{"Key": key} for key in keys[start : start + _DELETE_BATCH]]
        s3.delete_objects(Bucket=settings().bucket, Delete={"Objects": batch, "Quiet": True})


def _is_missing(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey")
