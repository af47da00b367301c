"""Objects in the stage's S3 bucket: build cache, job logs and artifacts, under per-project prefixes.

cache/{account}/{project}/{job cache folder}/...        a job's cache entries
builds/{account}/{project}/{build}/{job}/log/...       a job's log (chunks while it runs, then one object)
builds/{account}/{project}/{build}/{job}/artifacts/... a job's artifacts, by file name
"""

from __future__ import annotations

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.core.jobs import Job


def project_cache_prefix(account_id: int, project_id: int) -> str:
    """Where a project's build cache lives: one folder per job below it."""
    return f"cache/{account_id}/{project_id}/"


def build_prefix(account_id: int, project_id: int, build_id: int) -> str:
    """Where everything a build's jobs stored lives (removed with the build)."""
    return f"builds/{account_id}/{project_id}/{build_id}/"


def job_prefix(account_id: int, project_id: int, build_id: int, job_id: str) -> str:
    """Where one job's log and artifacts live."""
    return f"{build_prefix(account_id, project_id, build_id)}{job_id}/"


def prefix_of(job: Job) -> str:
    """Where a job's log and artifacts are kept (a deployment job's: under the build it deploys)."""
    return job_prefix(job.account_id, job.project_id, job.build_id, job.job_id)


def project_prefixes(account_id: int, project_id: int) -> list[str]:
    """Every prefix holding objects of a project (removed with it)."""
    return [project_cache_prefix(account_id, project_id), f"builds/{account_id}/{project_id}/"]


def delete_keys(keys: list[str]) -> None:
    """Delete these objects, a thousand (delete_objects' limit) per call: for keys just listed, without listing
    them again."""
    s3 = aws.client("s3")
    bucket = settings().bucket
    for start in range(0, len(keys), 1000):
        batch = [{"Key": key} for key in keys[start : start + 1000]]
        s3.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})


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
