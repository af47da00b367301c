"""Presigned S3 URLs for runners: each names one object, and an upload one exact size, for a short while.

A runner holds no AWS credential; it sends and fetches its job's files through these. An upload URL is signed
with the object's key, its Content-Length and its metadata, so it can store nothing else and nothing larger; and
it lasts minutes, not the hour a job may run: a runner asks for it just before it sends, and S3 checks a URL's
expiry when a request starts, so a big file still arrives whole. What a URL could still change after its job
ended is refused when served: the job's finish records each artifact's ETag (store/artifacts.py).
"""

from __future__ import annotations

from typing import Any

from chalicelib import aws
from chalicelib.config import settings

UPLOAD_URL_SECONDS = 300
DOWNLOAD_URL_SECONDS = 600


def presigned_upload(key: str, size: int, content_type: str, metadata: dict[str, str] | None = None) -> dict[str, Any]:
    """A PUT of exactly ``size`` bytes to ``key``: {"url", "headers"} (the headers it was signed with)."""
    params: dict[str, Any] = {
        "Bucket": settings().bucket,
        "Key": key,
        "ContentLength": size,
        "ContentType": content_type,
    }
    headers = {"Content-Type": content_type}
    if metadata:
        params["Metadata"] = metadata
        headers.update({f"x-amz-meta-{name}": value for name, value in metadata.items()})
    url = aws.client("s3").generate_presigned_url("put_object", Params=params, ExpiresIn=UPLOAD_URL_SECONDS)
    return {"url": url, "headers": headers}


def presigned_download(key: str) -> str:
    """A GET of ``key``."""
    url: str = aws.client("s3").generate_presigned_url(
        "get_object", Params={"Bucket": settings().bucket, "Key": key}, ExpiresIn=DOWNLOAD_URL_SECONDS
    )
    return url
