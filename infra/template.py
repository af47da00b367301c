"""What ``chalice package --merge-template`` merges over Chalice's own template for one stage.

Chalice generates the functions, the REST API, the SQS event sources and the schedule. This adds what they use:
every table of chalicelib/store/schema.py's ALL_MODELS, a queue and its ``-dlq`` dead-letter queue per SQS handler
(as the local stack's chalicelib/local/resources.py makes them), the data bucket, the secrets key and its alias, and a
log group per function; it names the functions, sets their runtime, and replaces the role's policy with
infra/policy.py's. Chalice's merge is deep for objects and replaces anything else (a list, a string) whole.

It also adds what runs build jobs (chalicelib/executors/), each with a role of its own that grants nothing but its
logs: the runner function (the "lambda" executor), Chalice's code in the same package with a handler of its own;
and the CodeBuild project (the "codebuild" executor), where a job runs in its own container image.
"""

from __future__ import annotations

from email.utils import parseaddr
from typing import Any

from chalice.utils import to_cfn_resource_name

from chalicelib.executors import codebuild
from chalicelib.local.resources import DEAD_LETTER_SUFFIX, MAX_RECEIVES
from chalicelib.store.schema import ALL_MODELS
from infra.policy import (
    SIGN_ACTIONS,
    Resources,
    build_project_role_policies,
    codebuild_trust_policy,
    lambda_trust_policy,
    role_policies,
    runner_role_policies,
    secrets_key_policy,
)
from infra.stage import API_HANDLER, Stage

# Chalice writes the runtime of the Python that runs it, and the project's (3.11) is one Lambda no longer
# creates; the functions' dependencies are installed for this one (see infra/package.py).
LAMBDA_RUNTIME = "python3.13"
LOG_RETENTION_DAYS = 30
VISIBILITY_TIMEOUT_FACTOR = 6  # AWS's advice for a queue that triggers a function: six times its timeout
QUEUE_RETENTION_SECONDS = 4 * 24 * 3600  # SQS's default
DEAD_LETTER_RETENTION_SECONDS = 14 * 24 * 3600  # SQS's longest: a parked message outlives its first delivery
# The bucket's prefixes are chalicelib/store/blobs.py's: builds/ holds jobs' logs and artifacts, cache/ the
# build cache. A build's objects go with the build; these bound what is left behind and what nobody deletes.
BUILD_OBJECT_DAYS = 180
CACHE_OBJECT_DAYS = 30  # from its last upload: an entry kept unchanged that long is rebuilt by the next build
UNFINISHED_UPLOAD_DAYS = 1
RETAIN = {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}  # deleting the stack keeps the data
DELETE = {"DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete"}  # queues and logs go with the stack
REST_API = "RestAPI"  # Chalice's logical id of the API
DEPLOYMENT_PACKAGE = "./deployment.zip"  # where `chalice package` puts every function's code (its CodeUri)
RUNNER = "Runner"  # the runner function's logical id
SIGNING_KEY = "IdTokenSigningKey"  # the ID tokens' KMS key's logical id
RUNNER_HANDLER = "chalicelib.runner.aws_lambda.handler"
RUNNER_TIMEOUT_SECONDS = 900  # Lambda's longest
RUNNER_MEMORY_MB = 3008
RUNNER_FINISH_SECONDS = 60  # of the runner's time, kept to report a job that reached its limit (log, artifacts)
MIN_EVENT_AGE_SECONDS = 60  # the shortest MaximumEventAgeInSeconds Lambda accepts
BUILD_PROJECT = "Builds"  # the CodeBuild project's logical id
IMAGES = "BuildImages"  # the ECR repository of Conveyor's build images (conveyor images push), its logical id
# what CodeBuild needs of a repository to pull an image from it with its own identity (ImagePullCredentialsType)
IMAGE_PULL_ACTIONS = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
# What a build started without a job's overrides (from the console) gets; each job's StartBuild names its image
# and its limit (chalicelib/executors/codebuild.py).
BUILD_PROJECT_IMAGE = "aws/codebuild/standard:7.0"  # Ubuntu 22.04, AppVeyor's Ubuntu2204
BUILD_PROJECT_TIMEOUT_MINUTES = 60  # CodeBuild's default


def merge_template(stage: Stage) -> dict[str, Any]:
    """The template to merge over Chalice's for ``stage``."""
    resources: dict[str, Any] = {}
    tables = _tables(stage, resources)
    sent_to, consumed = _queues(stage, resources)
    log_groups = _functions(stage, resources, consumed)
    _runner(stage, resources)
    _codebuild(stage, resources)
    resources[IMAGES] = _images(stage)
    resources["DataBucket"] = {"Type": "AWS::S3::Bucket", **RETAIN, "Properties": _bucket(stage)}
    resources.update(_secrets_key(stage))
    resources.update(_signing_key(stage))
    resources["NotificationSender"] = _sender_identity(stage)
    used = Resources(
        tables,
        sent_to,
        sorted(set(consumed.values())),
        "DataBucket",
        "SecretsKey",
        log_groups,
        "NotificationSender",
        RUNNER,
        BUILD_PROJECT,
        SIGNING_KEY,
    )
    resources["DefaultRole"] = {"Properties": {"Policies": role_policies(used)}}
    # where `conveyor images push` pushes the images (docs/executors.md, "On AWS")
    outputs: dict[str, Any] = {"ImageRepository": {"Value": {"Fn::GetAtt": [IMAGES, "RepositoryUri"]}}}
    if stage.custom_domain:
        _custom_domain(stage, resources, outputs)
    return {"Resources": resources, "Outputs": outputs}


def _tables(stage: Stage, resources: dict[str, Any]) -> dict[str, list[str]]:
    """A table per model, as PynamoDB would create it; returns each table's logical id with its index names."""
    tables = {}
    for model in ALL_MODELS:
        schema: Any = model._get_schema()  # what Model.create_table sends: the keys, the indexes, their projections
        name = model.Meta.table_name
        logical_id = to_cfn_resource_name(name.removeprefix(stage.settings.table_prefix)) + "Table"
        definitions = {item["AttributeName"]: item["AttributeType"] for item in schema["attribute_definitions"]}
        properties: dict[str, Any] = {
            "TableName": name,
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": k, "AttributeType": v} for k, v in sorted(definitions.items())],
            "KeySchema": _key_schema(schema["key_schema"]),
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        }
        for kind, key in (
            ("GlobalSecondaryIndexes", "global_secondary_indexes"),
            ("LocalSecondaryIndexes", "local_secondary_indexes"),
        ):
            if schema[key]:
                properties[kind] = [
                    {
                        "IndexName": index["index_name"],
                        "KeySchema": _key_schema(index["key_schema"]),
                        "Projection": index["projection"],
                    }
                    for index in sorted(schema[key], key=lambda index: index["index_name"])
                ]
        expiry = model._ttl_attribute()  # claims that expire (webhook deliveries): DynamoDB deletes them
        if expiry is not None:
            properties["TimeToLiveSpecification"] = {"AttributeName": expiry.attr_name, "Enabled": True}
        resources[logical_id] = {"Type": "AWS::DynamoDB::Table", **RETAIN, "Properties": properties}
        indexes = schema["global_secondary_indexes"] + schema["local_secondary_indexes"]
        tables[logical_id] = sorted(index["index_name"] for index in indexes)
    return tables


def _key_schema(elements: list[dict[str, str]]) -> list[dict[str, str]]:
    """The hash key first, as DynamoDB wants it."""
    ordered = sorted(elements, key=lambda element: element["KeyType"] != "HASH")
    return [{"AttributeName": element["AttributeName"], "KeyType": element["KeyType"]} for element in ordered]


def _queues(stage: Stage, resources: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """A queue and its dead-letter queue per SQS handler; returns the queues the app sends to, and every
    consumed queue's logical id by its name."""
    sent_to: list[str] = []
    consumed: dict[str, str] = {}
    handled = [function.queue for function in stage.functions if function.queue]
    for name in sorted({queue.removesuffix(DEAD_LETTER_SUFFIX) for queue in handled}):
        logical_id = to_cfn_resource_name(name.removeprefix(f"{stage.app_name}-{stage.name}-"))
        queue_id, dead_letter_id = f"{logical_id}Queue", f"{logical_id}DeadLetterQueue"
        dead_letter_name = f"{name}{DEAD_LETTER_SUFFIX}"
        resources[dead_letter_id] = _queue(
            stage, dead_letter_name, MessageRetentionPeriod=DEAD_LETTER_RETENTION_SECONDS
        )
        resources[queue_id] = _queue(
            stage,
            name,
            MessageRetentionPeriod=QUEUE_RETENTION_SECONDS,
            RedrivePolicy={
                "deadLetterTargetArn": {"Fn::GetAtt": [dead_letter_id, "Arn"]},
                "maxReceiveCount": MAX_RECEIVES,
            },
        )
        sent_to.append(queue_id)
        for queue, resource in ((name, queue_id), (dead_letter_name, dead_letter_id)):
            if queue in handled:
                consumed[queue] = resource
    return sent_to, consumed


def _queue(stage: Stage, name: str, **properties: Any) -> dict[str, Any]:
    consumer = stage.consumer_of(name)
    if consumer:  # a message comes back to the queue only once its handler has surely given up on it
        properties["VisibilityTimeout"] = VISIBILITY_TIMEOUT_FACTOR * consumer.timeout
    return {
        "Type": "AWS::SQS::Queue",
        **DELETE,
        "Properties": {"QueueName": name, "SqsManagedSseEnabled": True, **properties},
    }


def _functions(stage: Stage, resources: dict[str, Any], consumed: dict[str, str]) -> list[str]:
    """Names, runtime, a log group and the executors' settings for each of Chalice's functions; an SQS handler's
    event source refers to its queue's resource, so the queue exists before Lambda polls it. Returns the log
    groups' logical ids."""
    log_groups = []
    for function in stage.functions:
        log_group = f"{function.logical_id}LogGroup"
        resources[log_group] = _log_group(f"/aws/lambda/{function.function_name}")
        properties: dict[str, Any] = {
            "FunctionName": function.function_name,
            "Runtime": LAMBDA_RUNTIME,
            "Environment": {"Variables": _executor_settings(stage, function.name)},
        }
        if function.queue in consumed:
            # A Fn::Sub, as Chalice's value is: the merge replaces its string, but would mix two intrinsics.
            queue_arn = {"Fn::Sub": f"${{{consumed[function.queue]}.Arn}}"}
            properties["Events"] = {f"{function.logical_id}SqsEventSource": {"Properties": {"Queue": queue_arn}}}
        # The log group comes first: the role may write to it but not create it, so no log is lost or orphaned.
        resources[function.logical_id] = {"DependsOn": [log_group], "Properties": properties}
        log_groups.append(log_group)
    return log_groups


def _log_group(name: str) -> dict[str, Any]:
    return {
        "Type": "AWS::Logs::LogGroup",
        **DELETE,
        "Properties": {"LogGroupName": name, "RetentionInDays": LOG_RETENTION_DAYS},
    }


def _executor_settings(stage: Stage, handler: str) -> dict[str, Any]:
    """What the control plane's functions know of the runner function and the CodeBuild project (merged into the
    stage's variables)."""
    variables: dict[str, Any] = {
        "CONVEYOR_EXECUTOR": "lambda",
        "CONVEYOR_RUNNER_FUNCTION": {"Ref": RUNNER},
        "CONVEYOR_CODEBUILD_PROJECT": {"Ref": BUILD_PROJECT},  # a project's Ref is its name
        "CONVEYOR_IMAGE_REPOSITORY": {"Fn::GetAtt": [IMAGES, "RepositoryUri"]},  # AppVeyor's Ubuntu names run there
        # CodeBuild and build agents take the stage's limit (AppVeyor's 60 minutes unless the stage sets one)...
        "CONVEYOR_JOB_TIMEOUT_SECONDS": str(stage.settings.job_timeout_seconds),
        # ...the runner function only what leaves it time to report: a longer job would end in a killed runner.
        "CONVEYOR_RUNNER_TIMEOUT_SECONDS": str(RUNNER_TIMEOUT_SECONDS - RUNNER_FINISH_SECONDS),
    }
    if handler != API_HANDLER:  # the API refers to its handler: the handler cannot refer to the API's URL back
        variables["CONVEYOR_RUNNER_API_URL"] = _runner_api_url(stage)
    return variables


def _runner_api_url(stage: Stage) -> Any:
    """The URL runners call the API at: the stage's CONVEYOR_BASE_URL (its custom domain) when it sets one, else
    API Gateway's URL of the stage (as Chalice's EndpointURL output, less its slash)."""
    if stage.settings.base_url:
        return stage.settings.base_url.rstrip("/")
    return {"Fn::Sub": f"https://${{{REST_API}}}.execute-api.${{AWS::Region}}.${{AWS::URLSuffix}}/{stage.api_stage}"}


def _runner(stage: Stage, resources: dict[str, Any]) -> None:
    """The runner function: one build job per invocation, under a role that grants nothing but its own logs, and
    no environment variable of the service (a build could read them). An invocation is never retried: the handler
    ends its process on purpose, which Lambda counts as an error, and a retry would run the job again."""
    function_name = f"{stage.app_name}-{stage.name}-runner"  # chalicelib/config.py's default runner_function
    log_group, role = f"{RUNNER}LogGroup", f"{RUNNER}Role"
    resources[log_group] = _log_group(f"/aws/lambda/{function_name}")
    resources[role] = {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": lambda_trust_policy(),
            "Policies": runner_role_policies(log_group),
        },
    }
    resources[RUNNER] = {
        "Type": "AWS::Serverless::Function",
        "DependsOn": [log_group],  # as Chalice's functions: the role may write to the group but not create it
        "Properties": {
            "FunctionName": function_name,
            "CodeUri": DEPLOYMENT_PACKAGE,
            "Handler": RUNNER_HANDLER,
            "Runtime": LAMBDA_RUNTIME,
            "Architectures": ["x86_64"],  # the platform of the dependencies' wheels (infra/package.py)
            "Timeout": RUNNER_TIMEOUT_SECONDS,
            "MemorySize": RUNNER_MEMORY_MB,
            "Role": {"Fn::GetAtt": [role, "Arn"]},
        },
    }
    resources[f"{RUNNER}InvokeConfig"] = {
        "Type": "AWS::Lambda::EventInvokeConfig",
        "Properties": {
            "FunctionName": {"Ref": RUNNER},
            "Qualifier": "$LATEST",
            "MaximumRetryAttempts": 0,
            # An event that waited longer than its job's lease is for a job the lease sweeper ends failed.
            "MaximumEventAgeInSeconds": max(MIN_EVENT_AGE_SECONDS, stage.settings.lease_seconds),
        },
    }


def _codebuild(stage: Stage, resources: dict[str, Any]) -> None:
    """The CodeBuild project: one build per job, no source (the buildspec fetches the runner), no artifacts (the
    runner uploads them), and a service role that grants nothing but its own logs: a build's commands act with it.
    No ConcurrentBuildLimit: a project with one refuses a build beyond it, where CodeBuild would queue it."""
    project_name = f"{stage.app_name}-{stage.name}-builds"
    log_group, role = f"{BUILD_PROJECT}LogGroup", f"{BUILD_PROJECT}Role"
    resources[log_group] = _log_group(f"/aws/codebuild/{project_name}")  # CodeBuild's default name for it
    resources[role] = {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": codebuild_trust_policy(),
            "Policies": build_project_role_policies(log_group),
        },
    }
    resources[BUILD_PROJECT] = {
        "Type": "AWS::CodeBuild::Project",
        "Properties": {
            "Name": project_name,
            # The buildspec every job's StartBuild sends: a build started from the console runs the same.
            "Source": {"Type": "NO_SOURCE", "BuildSpec": codebuild.BUILDSPEC},
            "Artifacts": {"Type": "NO_ARTIFACTS"},
            "Environment": {
                "Type": "LINUX_CONTAINER",
                "ComputeType": codebuild.COMPUTE_TYPE,
                "Image": BUILD_PROJECT_IMAGE,
                "PrivilegedMode": False,  # no Docker daemon for a job's scripts
                "ImagePullCredentialsType": "CODEBUILD",  # CodeBuild's identity pulls images, not the role
            },
            "TimeoutInMinutes": BUILD_PROJECT_TIMEOUT_MINUTES,
            "QueuedTimeoutInMinutes": codebuild.QUEUED_TIMEOUT_MINUTES,
            # The group comes first (a Ref): the role may write to it but not create it.
            "LogsConfig": {"CloudWatchLogs": {"Status": "ENABLED", "GroupName": {"Ref": log_group}}},
            "ServiceRole": {"Fn::GetAtt": [role, "Arn"]},
        },
    }


def _images(stage: Stage) -> dict[str, Any]:
    """The repository of Conveyor's build images, which CodeBuild pulls for the project's builds alone (with its
    own identity: the project's role reaches no registry). Kept with the stack's data: images are pushed to it by
    hand (``conveyor images push``), not made by the stack."""
    pull = {
        "Sid": "TheBuildProjectPullsItsImages",
        "Effect": "Allow",
        "Principal": {"Service": "codebuild.amazonaws.com"},
        "Action": IMAGE_PULL_ACTIONS,
        "Condition": {
            "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
            "ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": [BUILD_PROJECT, "Arn"]}},
        },
    }
    return {
        "Type": "AWS::ECR::Repository",
        **RETAIN,
        "Properties": {
            "RepositoryName": f"{stage.app_name}-{stage.name}-images",
            "ImageScanningConfiguration": {"ScanOnPush": True},
            "RepositoryPolicyText": {"Version": "2012-10-17", "Statement": [pull]},
        },
    }


def _bucket(stage: Stage) -> dict[str, Any]:
    """Private and encrypted; versioning stays off: logs are rewritten as they grow, and what is deleted must go."""
    return {
        "BucketName": stage.settings.bucket,
        "PublicAccessBlockConfiguration": {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        },
        "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
        "BucketEncryption": {
            "ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
        },
        "LifecycleConfiguration": {
            "Rules": [
                {
                    "Id": "build-logs-and-artifacts",
                    "Status": "Enabled",
                    "Prefix": "builds/",
                    "ExpirationInDays": BUILD_OBJECT_DAYS,
                },
                {"Id": "build-cache", "Status": "Enabled", "Prefix": "cache/", "ExpirationInDays": CACHE_OBJECT_DAYS},
                {
                    "Id": "unfinished-uploads",  # multipart uploads of artifacts, caches and composed logs
                    "Status": "Enabled",
                    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": UNFINISHED_UPLOAD_DAYS},
                },
            ]
        },
    }


def _secrets_key(stage: Stage) -> dict[str, Any]:
    """The KMS key behind the stage's CONVEYOR_KMS_KEY alias, kept when the stack goes: without it no stored
    secret can be read again."""
    if not stage.settings.kms_key.startswith("alias/"):
        raise ValueError(f"CONVEYOR_KMS_KEY must be an alias/... for the template to make it: {stage.settings.kms_key}")
    key = {
        "Description": f"{stage.app_name} {stage.name}: project and environment secrets",
        "EnableKeyRotation": True,
        "KeyPolicy": secrets_key_policy(),
    }
    alias = {"AliasName": stage.settings.kms_key, "TargetKeyId": {"Ref": "SecretsKey"}}
    return {
        "SecretsKey": {"Type": "AWS::KMS::Key", **RETAIN, "Properties": key},
        "SecretsKeyAlias": {"Type": "AWS::KMS::Alias", "Properties": alias},
    }


def _signing_key(stage: Stage) -> dict[str, Any]:
    """The asymmetric KMS key behind the stage's CONVEYOR_OIDC_SIGNING_KEY alias: it signs jobs' ID tokens, and its
    private half never leaves KMS. Kept when the stack goes (relying parties may still hold its public half); it
    does not rotate by itself: docs/oidc.md says how a new one replaces it."""
    alias_name = stage.settings.oidc_signing_key
    if not alias_name.startswith("alias/"):
        raise ValueError(f"CONVEYOR_OIDC_SIGNING_KEY must be an alias/... for the template to make it: {alias_name}")
    key = {
        "Description": f"{stage.app_name} {stage.name}: signs jobs' OpenID Connect ID tokens",
        "KeySpec": "RSA_2048",
        "KeyUsage": "SIGN_VERIFY",
        "KeyPolicy": secrets_key_policy(SIGN_ACTIONS),
    }
    alias = {"AliasName": alias_name, "TargetKeyId": {"Ref": SIGNING_KEY}}
    return {
        SIGNING_KEY: {"Type": "AWS::KMS::Key", **RETAIN, "Properties": key},
        f"{SIGNING_KEY}Alias": {"Type": "AWS::KMS::Alias", "Properties": alias},
    }


def _sender_identity(stage: Stage) -> dict[str, Any]:
    """The SES identity of the stage's CONVEYOR_NOTIFICATION_SENDER: AWS mails the address a link to verify it."""
    address = parseaddr(stage.settings.notification_sender)[1] or stage.settings.notification_sender
    return {"Type": "AWS::SES::EmailIdentity", **DELETE, "Properties": {"EmailIdentity": address}}


def _custom_domain(stage: Stage, resources: dict[str, Any], outputs: dict[str, Any]) -> None:
    """Chalice's base path mapping names the stage before SAM has created it (aws/chalice#1735); SAM's
    ``RestAPI.Stage`` reference waits for it. The output is what the domain's DNS record points at."""
    resources["ApiGatewayCustomDomainMapping"] = {"Properties": {"Stage": {"Ref": "RestAPI.Stage"}}}
    target = "DistributionDomainName" if stage.endpoint_type == "EDGE" else "RegionalDomainName"
    outputs["CustomDomainTarget"] = {"Value": {"Fn::GetAtt": ["ApiGatewayCustomDomain", target]}}
