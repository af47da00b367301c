"""Objects in the stage's S3 bucket: build cache, and later logs and artifacts, under per-project prefixes."""

from __future__ import annotations

from chalicelib import aws
from chalicelib.config import settings


def project_cache_prefix(account_id: int, project_id: int) -> str:
    """Where a project's build cache lives: one folder per job below it."""
    return f"cache/{account_id}/{project_id}/"


def project_prefixes(account_id: int, project_id: int) -> list[str]:
    """Every prefix holding objects of a project (removed with it)."""
    return [project_cache_prefix(account_id, project_id)]


def delete_prefix(prefix: str) -> int:
    """Delete every object under ``prefix``; returns how many there were."""
    s3 = aws.client("s3")
    bucket = settings().bucket
    deleted = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys = [{"Key": entry["Key"]} for entry in page.get("Contents", [])]
        if keys:  # a page holds at most 1,000 keys, which is delete_objects' limit too
            s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
            deleted += len(keys)
    return deleted
