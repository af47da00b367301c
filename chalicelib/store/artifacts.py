"""A job's artifacts: one S3 object per file, ``{job prefix}artifacts/{file name}``.

An artifact is served only as its job left it: the job's finish records each object's ETag, and an object whose
ETag is another since (an upload URL used after its job ended) is refused with ArtifactChanged, checked on the
HEAD or GET that serving makes anyway. Artifacts recorded before ETags were (None) are served as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from botocore.exceptions import ClientError
from botocore.response import StreamingBody

from chalicelib import aws
from chalicelib.config import settings

DOWNLOAD_URL_SECONDS = 60
_CONTENT_TYPE = "application/octet-stream"  # what AppVeyor sends for every artifact


class ArtifactChanged(Exception):
    """The object is not the one its job's finish recorded: it changed after the job ended."""


@dataclass(frozen=True)
class StoredArtifact:
    """An artifact's object as storage holds it."""

    size: int
    etag: str


def artifact_key(job_prefix: str, file_name: str) -> str:
    """The object key of a job's artifact; ValueError if ``file_name`` could reach outside the job's artifacts."""
    segments = file_name.split("/")
    if not file_name or any(segment in ("", ".", "..") for segment in segments):
        # S3 keys are flat, but proxies and clients normalise paths: a key must say exactly what it means.
        raise ValueError(f"{file_name!r} is not an artifact file name.")
    return f"{job_prefix}artifacts/{file_name}"


def stored_artifact(job_prefix: str, file_name: str) -> StoredArtifact | None:
    """The size and ETag of a job's artifact in storage, or None when there is none."""
    try:
        head = aws.client("s3").head_object(Bucket=settings().bucket, Key=artifact_key(job_prefix, file_name))
    except ClientError as error:
        if _is_missing(error):
            return None
        raise
    return StoredArtifact(size=head["ContentLength"], etag=head["ETag"])


def open_artifact_stream(job_prefix: str, file_name: str, etag: str | None = None) -> StreamingBody:
    """A job's artifact as a stream read straight from S3 (the caller closes it); FileNotFoundError when missing,
    ArtifactChanged when its ETag is not ``etag`` (the one recorded at its job's finish)."""
    key = artifact_key(job_prefix, file_name)
    only_if = {"IfMatch": etag} if etag else {}
    try:
        response = aws.client("s3").get_object(Bucket=settings().bucket, Key=key, **only_if)
    except ClientError as error:
        if _is_missing(error):
            raise FileNotFoundError(f"The artifact {file_name!r} is not in storage.") from error
        if error.response.get("Error", {}).get("Code") in ("412", "PreconditionFailed"):
            raise ArtifactChanged(file_name) from error
        raise
    body: StreamingBody = response["Body"]
    return body


def artifact_url(
    job_prefix: str, file_name: str, seconds: int = DOWNLOAD_URL_SECONDS, etag: str | None = None
) -> str | None:
    """A short-lived presigned URL of a job's artifact, or None when there is none; ArtifactChanged when its ETag
    is not ``etag`` (the one recorded at its job's finish).

    Downloads always leave through S3: an artifact can be far bigger than a Lambda response, and
    binary bodies through API Gateway need its binary media types set up.
    """
    s3 = aws.client("s3")
    bucket = settings().bucket
    key = artifact_key(job_prefix, file_name)
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
    except ClientError as error:
        if _is_missing(error):
            return None
        raise
    if etag and head["ETag"] != etag:
        raise ArtifactChanged(file_name)
    url: str = s3.generate_presigned_url(
        "get_object",
        Params={
            "Bucket": bucket,
            "Key": key,
            "ResponseContentType": _CONTENT_TYPE,
            "ResponseContentDisposition": attachment(PurePosixPath(file_name).name),
        },
        ExpiresIn=seconds,
    )
    return url


def attachment(file_name: str) -> str:
    """A Content-Disposition naming the download; other than plain ASCII names also go in RFC 5987 form."""
    plain = "".join(char if " " <= char <= "~" and char not in '"\\' else "_" for char in file_name)
    if plain == file_name:
        return f'attachment; filename="{plain}"'
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(file_name, safe='')}"


def _is_missing(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey")
