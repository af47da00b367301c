"""The functions' permissions: the calls chalicelib makes, on the stack's own resources, and nothing else.

Chalice's generated policy cannot be used: it finds boto3 calls by reading the code, does not see the clients of
chalicelib/aws.py, and so grants only logs and SQS, on every queue. This one replaces it in the merge template.
No action is a wildcard. Keep it in step with the code: a call it does not list fails with AccessDenied.
What runs the builds, the runner function and the CodeBuild project, has a role of its own each, which grants
nothing but its own logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# PynamoDB's reads and writes, batches and transactions (a transaction is authorised item by item, as these
# actions). No Scan: no path of the service scans a table; no DescribeTable: PynamoDB 6 does not ask.
TABLE_ACTIONS = [
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
]
QUERY_ACTIONS = ["dynamodb:Query"]  # all an index serves
SEND_ACTIONS = ["sqs:GetQueueUrl", "sqs:SendMessage"]  # chalicelib/store/queues.py
CONSUME_ACTIONS = ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"]  # Lambda's SQS poller
# chalicelib/store: logs, artifacts, cache (uploads, multipart ones, copies, ranges, presigned GETs, deletes).
OBJECT_ACTIONS = ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:PutObject"]
BUCKET_ACTIONS = ["s3:ListBucket"]  # listing prefixes; it also makes a missing key a 404 rather than a 403
SECRET_ACTIONS = ["kms:Decrypt", "kms:Encrypt"]  # chalicelib/domain/shared/secrets.py
SIGN_ACTIONS = ["kms:GetPublicKey", "kms:Sign"]  # chalicelib/store/signing.py: jobs' ID tokens, the JWKS
LOG_ACTIONS = ["logs:CreateLogStream", "logs:PutLogEvents"]  # the log groups are the template's
EMAIL_ACTIONS = ["ses:SendEmail"]  # chalicelib/notify/notifiers/email.py, from the stage's verified sender identity
INVOKE_ACTIONS = ["lambda:InvokeFunction"]  # chalicelib/executors/aws_lambda.py: a job's ticket to the runner
# chalicelib/executors/codebuild.py: a job's build, its state, its cancel. No iam:PassRole: no build overrides the
# project's service role.
BUILD_ACTIONS = ["codebuild:BatchGetBuilds", "codebuild:StartBuild", "codebuild:StopBuild"]
# The key's administrators are the account's IAM principals that IAM allows these (AWS's default key policy
# grants kms:* to the account; this lists it out). The functions' role gets SECRET_ACTIONS through IAM.
KEY_ADMIN_ACTIONS = [
    "kms:CancelKeyDeletion",
    "kms:CreateAlias",
    "kms:CreateGrant",
    "kms:DeleteAlias",
    "kms:DescribeKey",
    "kms:DisableKey",
    "kms:DisableKeyRotation",
    "kms:EnableKey",
    "kms:EnableKeyRotation",
    "kms:GetKeyPolicy",
    "kms:GetKeyRotationStatus",
    "kms:ListGrants",
    "kms:ListKeyPolicies",
    "kms:ListKeyRotations",
    "kms:ListResourceTags",
    "kms:PutKeyPolicy",
    "kms:RetireGrant",
    "kms:RevokeGrant",
    "kms:RotateKeyOnDemand",
    "kms:ScheduleKeyDeletion",
    "kms:TagResource",
    "kms:UntagResource",
    "kms:UpdateAlias",
    "kms:UpdateKeyDescription",
]


@dataclass(frozen=True)
class Resources:
    """The logical ids of what the functions use."""

    tables: dict[str, list[str]]  # each table with the names of its indexes
    sent_to: list[str]  # the queues the app sends messages to
    consumed: list[str]  # the queues with a handler, dead-letter queues included
    bucket: str
    key: str
    log_groups: list[str]
    sender_identity: str | None = None  # the SES identity notification e-mails are sent from
    runner: str | None = None  # the runner function build jobs are handed to
    build_project: str | None = None  # the CodeBuild project container-image jobs run on
    signing_key: str | None = None  # the asymmetric KMS key that signs jobs' ID tokens


def role_policies(used: Resources) -> list[dict[str, Any]]:
    """The ``Policies`` of the functions' role (Chalice's DefaultRole)."""
    tables = [_arn(table) for table in used.tables]
    indexes = [_sub(f"${{{table}.Arn}}/index/{index}") for table, names in used.tables.items() for index in names]
    statements = [
        _allow("Tables", TABLE_ACTIONS, tables),
        _allow("Indexes", QUERY_ACTIONS, indexes),
        _allow("SendToQueues", SEND_ACTIONS, [_arn(queue) for queue in used.sent_to]),
        _allow("ConsumeQueues", CONSUME_ACTIONS, [_arn(queue) for queue in used.consumed]),
        _allow("Bucket", BUCKET_ACTIONS, [_arn(used.bucket)]),
        _allow("BucketObjects", OBJECT_ACTIONS, [_sub(f"${{{used.bucket}.Arn}}/*")]),
        _allow("Secrets", SECRET_ACTIONS, [_arn(used.key)]),
        _allow("SignIdTokens", SIGN_ACTIONS, [_arn(used.signing_key)] if used.signing_key else []),
        _allow("Logs", LOG_ACTIONS, [_arn(group) for group in used.log_groups]),  # a group's Arn ends in :*
        _allow("Email", EMAIL_ACTIONS, [_identity_arn(used.sender_identity)] if used.sender_identity else []),
        _allow("InvokeRunner", INVOKE_ACTIONS, [_arn(used.runner)] if used.runner else []),
        _allow("Builds", BUILD_ACTIONS, [_arn(used.build_project)] if used.build_project else []),
    ]
    document = {"Version": "2012-10-17", "Statement": [statement for statement in statements if statement["Resource"]]}
    return [{"PolicyName": "DefaultRolePolicy", "PolicyDocument": document}]


def runner_role_policies(log_group: str) -> list[dict[str, Any]]:
    """The ``Policies`` of the runner function's own role: its log group, nothing else.

    Builds run arbitrary code in that function, and Lambda hands them its role's credentials (in the
    environment), so the role must be worth nothing to a build: no table, queue, bucket, key or other function.
    """
    return _own_logs_only("RunnerRolePolicy", log_group)


def build_project_role_policies(log_group: str) -> list[dict[str, Any]]:
    """The ``Policies`` of the CodeBuild project's service role: its log group, nothing else.

    A build's commands act with that role (CodeBuild serves its credentials to the build's container), and they
    are a job's scripts, so the role must be worth nothing to a build, as the runner function's. The log group is
    the template's: CodeBuild writes to it and need not create it. Images are pulled with CodeBuild's own identity
    (the project's ImagePullCredentialsType), so the role has no registry to read either.
    """
    return _own_logs_only("BuildProjectRolePolicy", log_group)


def lambda_trust_policy() -> dict[str, Any]:
    """Who may assume a function's role: Lambda, for the function."""
    return _trust("lambda.amazonaws.com")


def codebuild_trust_policy() -> dict[str, Any]:
    """Who may assume a CodeBuild project's service role: CodeBuild, for the project's builds."""
    return _trust("codebuild.amazonaws.com")


def secrets_key_policy(actions: list[str] = SECRET_ACTIONS) -> dict[str, Any]:
    """The secrets key's policy (or, with SIGN_ACTIONS, the signing key's): it trusts the account's IAM policies,
    for the listed actions only."""
    account = {"AWS": _sub("arn:${AWS::Partition}:iam::${AWS::AccountId}:root")}
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Administer",
                "Effect": "Allow",
                "Principal": account,
                "Action": KEY_ADMIN_ACTIONS,
                "Resource": "*",
            },
            {"Sid": "Use", "Effect": "Allow", "Principal": account, "Action": actions, "Resource": "*"},
        ],
    }


def _own_logs_only(policy_name: str, log_group: str) -> list[dict[str, Any]]:
    document = {"Version": "2012-10-17", "Statement": [_allow("Logs", LOG_ACTIONS, [_arn(log_group)])]}
    return [{"PolicyName": policy_name, "PolicyDocument": document}]


def _trust(service: str) -> dict[str, Any]:
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
    return {"Version": "2012-10-17", "Statement": [statement]}


def _allow(sid: str, actions: list[str], resources: list[Any]) -> dict[str, Any]:
    return {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resources}


def _arn(logical_id: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def _identity_arn(logical_id: str) -> dict[str, Any]:
    """An SES identity's ARN (its Ref is the address it stands for)."""
    return _sub(f"arn:${{AWS::Partition}}:ses:${{AWS::Region}}:${{AWS::AccountId}}:identity/${{{logical_id}}}")


def _sub(text: str) -> dict[str, Any]:
    return {"Fn::Sub": text}
