"""The S3 provider: each selected artifact copied to ``s3://{bucket}/{folder}/{file name}``, streamed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import boto3
from boto3.exceptions import Boto3Error
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.config import settings
from chalicelib.deploy.base import Delivery, DeployFailed, open_artifact, selected

STS_AUDIENCE = "sts.amazonaws.com"
ROLE_SECONDS = 3600  # a deployment's uploads; STS's least is 900
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


def inline_refusal(settings: Mapping[str, str]) -> str | None:
    """Why an appveyor.yml deploy: entry may not deliver: without keys or a role of its own it would deliver with the
    service's own role."""
    if (settings.get("access_key_id") and settings.get("secret_access_key")) or settings.get("role_arn"):
        return None
    return (
        "An S3 entry of appveyor.yml needs access_key_id and secret_access_key, or role_arn (assumed with "
        "the deployment's ID token): the service's own role, which an environment may deploy with, is not "
        "lent to a repository's appveyor.yml."
    )


def _client(delivery: Delivery) -> Any:
    """A client of its own: the target's keys and region are not the service's (AWS_ENDPOINT_URL still applies).
    With ``role_arn``, the keys are a role's, assumed with the deployment's ID token (docs/oidc.md)."""
    key_id, secret = delivery.setting("access_key_id"), delivery.setting("secret_access_key")
    if bool(key_id) != bool(secret):
        raise DeployFailed("The S3 provider needs both access_key_id and secret_access_key, or neither.")
    role_arn = delivery.setting("role_arn")
    if role_arn and key_id:
        raise DeployFailed(
            "role_arn is assumed with the deployment's ID token, not with stored keys: leave access_key_id and "
            "secret_access_key empty, or role_arn."
        )
    config = _retries(delivery.setting("max_error_retry"))
    region = delivery.setting("region") or None
    try:
        if role_arn:
            key_id, secret, session_token = _assumed(delivery, role_arn, region)
        else:
            session_token = ""
        session = boto3.session.Session(
            aws_access_key_id=key_id or None,
            aws_secret_access_key=secret or None,
            aws_session_token=session_token or None,
            region_name=region,
        )
        return session.client("s3", config=config)
    except (BotoCoreError, ValueError) as error:
        raise DeployFailed(f"The S3 provider's settings are not usable: {error}") from None


def _assumed(delivery: Delivery, role_arn: str, region: str | None) -> tuple[str, str, str]:
    """The temporary keys of ``role_arn``, assumed with AssumeRoleWithWebIdentity and the deployment's ID token
    (for ``audience``, by default STS's own)."""
    if delivery.id_token is None:
        raise DeployFailed("role_arn needs the deployment's ID token, which this deployment does not have.")
    token = delivery.id_token(delivery.setting("audience") or STS_AUDIENCE)
    session_name = re.sub(r"[^\w+=,.@-]", "-", f"conveyor-{delivery.context.get('projectSlug', '')}")[:64]
    try:
        sts = boto3.session.Session(region_name=region).client("sts")
        answer = sts.assume_role_with_web_identity(
            RoleArn=role_arn, RoleSessionName=session_name, WebIdentityToken=token, DurationSeconds=ROLE_SECONDS
        )
    except (ClientError, BotoCoreError) as error:
        raise DeployFailed(f"Assuming {role_arn} with the deployment's ID token failed: {_reason(error)}") from None
    credentials = answer["Credentials"]
    delivery.log(f"Assumed {role_arn} with the deployment's ID token")
    return credentials["AccessKeyId"], credentials["SecretAccessKey"], credentials["SessionToken"]


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
