"""Objects put in the stage's bucket straight from a test, where a runner would send them through presigned URLs:
artifacts and build cache entries under the keys the service uses."""

from __future__ import annotations

from pathlib import Path

from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.store.artifacts import artifact_key


def put_artifact(job_prefix: str, file_name: str, local_path: Path) -> int:
    """Upload a local file as a job's artifact; returns its size."""
    extra = {"ContentType": "application/octet-stream"}
    aws.client("s3").upload_file(
        str(local_path), settings().bucket, artifact_key(job_prefix, file_name), ExtraArgs=extra
    )
    return local_path.stat().st_size


def put_cache_entry(key: str, local_path: Path, metadata: dict[str, str]) -> None:
    """Upload an archive as a cache entry, replacing the entry's previous one."""
    extra = {"ContentType": "application/gzip", "Metadata": metadata}
    aws.client("s3").upload_file(str(local_path), settings().bucket, key, ExtraArgs=extra)


def get_cache_entry(key: str, local_path: Path) -> bool:
    """Download a cache entry's archive to ``local_path``; False when there is none."""
    try:
        aws.client("s3").download_file(settings().bucket, key, str(local_path))
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
            return False
        raise
    return True
