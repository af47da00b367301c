"""The S3 provider: each selected artifact copied to ``s3://{bucket}/{folder}/{file name}``, streamed."""

from __future__ import annotations

from typing import Any

import boto3
from boto3.exceptions import Boto3Error
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.config import settings
from chalicelib.deploy.base import Delivery, DeployFailed, open_artifact, selected

_UNSUPPORTED = (
    "unzip",
    "remove_files",
    "encrypt",
    "set_content_type",
    "gzip_files",
    "headers",
    "reduced_redundancy",
)


def deliver(delivery: Delivery) -> None:
    """Upload the selected artifacts with the given keys, or the function's own credentials when none are given."""
    bucket = delivery.setting("bucket")
    if not bucket:
        raise DeployFailed("The S3 provider needs the bucket setting.")
    if bucket == settings().bucket:  # the function's role may write there: every account's logs and artifacts
        raise DeployFailed(f"The bucket {bucket} holds Conveyor's own data and cannot be deployed to.")
    artifacts = selected(delivery.artifacts, delivery.setting("artifact"))
    delivery.warn_unsupported(_UNSUPPORTED)
    s3 = _client(delivery)
    extra = {"ACL": "public-read"} if delivery.flag("set_public") else {}
    folder = delivery.setting("folder").replace("\\", "/").strip("/")
    for artifact in artifacts:
        delivery.stop_if_asked()
        key = f"{folder}/{artifact.file_name}" if folder else artifact.file_name
        try:
            with open_artifact(artifact) as stream:
                s3.upload_fileobj(stream, bucket, key, ExtraArgs=extra, Callback=lambda _sent: delivery.stop_if_asked())
        except (ClientError, BotoCoreError, Boto3Error) as error:
            target = f"s3://{bucket}/{key}"
            raise DeployFailed(f"Uploading {artifact.file_name} to {target} failed: {_reason(error)}") from None
        delivery.log(f"Uploaded {artifact.file_name} to s3://{bucket}/{key} ({artifact.size} bytes)")


def _client(delivery: Delivery) -> Any:
    """A client of its own: the target's keys and region are not the service's (AWS_ENDPOINT_URL still applies)."""
    key_id, secret = delivery.setting("access_key_id"), delivery.setting("secret_access_key")
    if bool(key_id) != bool(secret):
        raise DeployFailed("The S3 provider needs both access_key_id and secret_access_key, or neither.")
    config = _retries(delivery.setting("max_error_retry"))
    try:
        session = boto3.session.Session(
            aws_access_key_id=key_id or None,
            aws_secret_access_key=secret or None,
            region_name=delivery.setting("region") or None,
        )
        return session.client("s3", config=config)
    except (BotoCoreError, ValueError) as error:
        raise DeployFailed(f"The S3 provider's settings are not usable: {error}") from None


def _retries(max_error_retry: str) -> Config:
    if not max_error_retry:
        return Config()
    if not max_error_retry.isdigit():
        raise DeployFailed(f"max_error_retry must be a whole number, not {max_error_retry!r}.")
    return Config(retries={"total_max_attempts": int(max_error_retry) + 1})


def _reason(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{details.get('Code', 'Error')}: {details.get('Message') or error}"
    return str(error)
