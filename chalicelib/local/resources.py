"""Creating what the service needs on an AWS endpoint, where missing: tables, queues, the bucket.

Deployed stages get the same resources from the CloudFormation template; this serves the local
stack and the tests, and is safe to run again and again against the same endpoint.
"""

from __future__ import annotations

import json
from email.utils import parseaddr

from botocore.exceptions import ClientError
from chalice import Chalice
from chalice.app import SQSEventConfig

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.store import signing
from chalicelib.store.schema import ensure_tables

MAX_RECEIVES = 5  # deliveries of one message before it is parked in the dead-letter queue
DEAD_LETTER_SUFFIX = "-dlq"
# Six times the longest handler's Lambda timeout (the job runner's 900 s), as AWS advises: a message
# comes back only when its handler has surely given up.
VISIBILITY_TIMEOUT_SECONDS = 6 * 900


def queue_names(app: Chalice) -> list[str]:
    """The queues the app's SQS handlers listen on."""
    return [source.queue for source in app.event_sources if isinstance(source, SQSEventConfig) and source.queue]


def ensure_resources(app: Chalice) -> None:
    """Tables, the data bucket, the secrets key, the ID tokens' signing key, and a queue with its dead-letter queue
    per SQS handler."""
    ensure_tables()
    ensure_bucket(settings().bucket)
    ensure_kms_key(settings().kms_key)
    ensure_signing_key(settings().oidc_signing_key)
    for name in queue_names(app):  # a handler of a dead-letter queue gets it with its main queue
        ensure_queue(name.removesuffix(DEAD_LETTER_SUFFIX))
    ensure_sender_identity(settings().notification_sender)


def ensure_sender_identity(sender: str) -> None:
    """The notification sender's address, verified in SES (the emulator verifies at once; AWS mails a link)."""
    address = parseaddr(sender)[1] or sender
    aws.client("ses").verify_email_identity(EmailAddress=address)


def ensure_bucket(name: str) -> None:
    s3 = aws.client("s3")
    try:
        s3.head_bucket(Bucket=name)
    except ClientError:
        s3.create_bucket(Bucket=name)


def ensure_kms_key(alias: str) -> None:
    """A symmetric KMS key behind ``alias`` (``alias/...``), created if the alias is missing."""
    kms = aws.client("kms")
    aliases = [entry["AliasName"] for page in kms.get_paginator("list_aliases").paginate() for entry in page["Aliases"]]
    if alias not in aliases:
        key_id = kms.create_key(Description="Conveyor secrets")["KeyMetadata"]["KeyId"]
        kms.create_alias(AliasName=alias, TargetKeyId=key_id)


def ensure_signing_key(alias: str) -> None:
    """An asymmetric RSA signing key behind ``alias``, the ID tokens' (created if the alias is missing)."""
    kms = aws.client("kms")
    aliases = [entry["AliasName"] for page in kms.get_paginator("list_aliases").paginate() for entry in page["Aliases"]]
    if alias not in aliases:
        key_id = kms.create_key(Description="Conveyor ID tokens", KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")[
            "KeyMetadata"
        ]["KeyId"]
        kms.create_alias(AliasName=alias, TargetKeyId=key_id)
    signing.forget_public_keys()  # an emulator made afresh has new keys behind the same alias


def ensure_queue(name: str) -> str:
    """The queue's URL, creating it and its ``-dlq`` dead-letter queue if missing."""
    sqs = aws.client("sqs")
    dead_letter_url = sqs.create_queue(QueueName=f"{name}{DEAD_LETTER_SUFFIX}")["QueueUrl"]
    dead_letter_arn = sqs.get_queue_attributes(QueueUrl=dead_letter_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    attributes = {
        "VisibilityTimeout": str(VISIBILITY_TIMEOUT_SECONDS),
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": MAX_RECEIVES}),
    }
    url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    return url
