"""The deployable stack: ``make package``'s template for prod passes cfn-lint and holds what the code relies on.

The template is made as ``make package`` makes it, less the dependencies (``--no-dependencies``: the same
template, without a package index); bench/package.py measures the real deployment.zip.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cfnlint.api import lint_file
from pynamodb.indexes import Index
from pynamodb.models import Model

from chalicelib.config import settings
from chalicelib.executors import codebuild
from chalicelib.local.resources import DEAD_LETTER_SUFFIX, MAX_RECEIVES
from chalicelib.store.blobs import build_prefix, project_cache_prefix
from chalicelib.store.schema import ALL_MODELS
from infra.package import lambda_requirements

PROJECT_DIR = Path(__file__).resolve().parents[2]
CONFIG = json.loads((PROJECT_DIR / ".chalice" / "config.json").read_text())
STAGE = "prod"
RUNNER_HANDLER = "chalicelib.runner.aws_lambda.handler"  # the runner function's: it runs the builds
STORAGE_SERVICES = ("dynamodb:", "kms:", "sqs:", "ses:", "s3:")  # none of which a build may reach
LOG_ACTIONS = {"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}
BUILD_ACTIONS = {"codebuild:BatchGetBuilds", "codebuild:StartBuild", "codebuild:StopBuild"}


def package(out: Path, project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    command = [sys.executable, "-m", "infra.package", "--stage", STAGE, "--no-dependencies"]
    subprocess.run([*command, "--project-dir", str(project_dir), str(out)], cwd=PROJECT_DIR, check=True)
    return json.loads((out / "sam.json").read_text())


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("package")
    package(out)
    return out / "sam.json"


@pytest.fixture(scope="module")
def template(packaged: Path) -> dict[str, Any]:
    return json.loads(packaged.read_text())


@pytest.fixture
def prod_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The prod stage's environment, as its functions see it, so the models name prod's tables."""
    for name, value in CONFIG["stages"][STAGE]["environment_variables"].items():
        monkeypatch.setenv(name, value)
    yield


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: resource for name, resource in template["Resources"].items() if resource["Type"] == kind}


def lint_errors(path: Path) -> list[str]:
    matches = lint_file(path)
    for match in matches:  # warnings are shown (pytest -s, or with a failure), errors fail
        print(f"cfn-lint: {match}")
    return [str(match) for match in matches if match.rule.severity == "error"]


def test_packaged_template_passes_cfn_lint(packaged: Path) -> None:
    assert lint_errors(packaged) == []


def test_every_table_of_the_models_is_in_the_template_with_its_indexes(
    template: dict[str, Any], prod_settings: None
) -> None:
    tables = {table["Properties"]["TableName"]: table for table in resources(template, "AWS::DynamoDB::Table").values()}
    assert sorted(tables) == sorted(model.Meta.table_name for model in ALL_MODELS)
    for model in ALL_MODELS:
        properties = tables[model.Meta.table_name]["Properties"]
        assert properties["KeySchema"] == key_schema(model.get_attributes().values())
        assert properties["BillingMode"] == "PAY_PER_REQUEST"
        assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        declared = {
            index["IndexName"]: (index["KeySchema"], index["Projection"])
            for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
            for index in properties.get(kind, [])
        }
        assert declared == model_indexes(model), model.Meta.table_name
        expiry = model._ttl_attribute()
        if expiry is not None:
            assert properties["TimeToLiveSpecification"] == {"AttributeName": expiry.attr_name, "Enabled": True}


def key_schema(attributes: Any) -> list[dict[str, str]]:
    keys = [("HASH", a.attr_name) for a in attributes if a.is_hash_key] + [
        ("RANGE", a.attr_name) for a in attributes if a.is_range_key
    ]
    return [{"AttributeName": name, "KeyType": kind} for kind, name in keys]


def model_indexes(model: type[Model]) -> dict[str, tuple[list[dict[str, str]], dict[str, Any]]]:
    indexes = {}
    for index in (value for value in vars(model).values() if isinstance(value, Index)):
        projection: dict[str, Any] = {"ProjectionType": index.Meta.projection.projection_type}
        if getattr(index.Meta.projection, "non_key_attributes", None):
            projection["NonKeyAttributes"] = index.Meta.projection.non_key_attributes
        indexes[index.Meta.index_name] = (key_schema(index.Meta.attributes.values()), projection)
    return indexes


def test_every_sqs_handler_has_its_queue_with_a_dead_letter_queue_and_room_for_retries(
    template: dict[str, Any], prod_settings: None
) -> None:
    queues = resources(template, "AWS::SQS::Queue")
    consumed = set()
    for function in resources(template, "AWS::Serverless::Function").values():
        for event in function["Properties"].get("Events", {}).values():
            if event["Type"] != "SQS":
                continue
            queue = queues[queue_resource(event["Properties"]["Queue"])]["Properties"]
            consumed.add(queue["QueueName"])
            assert queue["VisibilityTimeout"] >= 6 * function["Properties"]["Timeout"], queue["QueueName"]
            if not queue["QueueName"].endswith(DEAD_LETTER_SUFFIX):
                redrive = queue["RedrivePolicy"]
                assert redrive["maxReceiveCount"] == MAX_RECEIVES
                dead_letter = queues[redrive["deadLetterTargetArn"]["Fn::GetAtt"][0]]["Properties"]
                assert dead_letter["QueueName"] == queue["QueueName"] + DEAD_LETTER_SUFFIX
    main_queues = [settings().jobs_queue, settings().deployments_queue, settings().notifications_queue]
    assert consumed == {*main_queues, *(f"{queue}{DEAD_LETTER_SUFFIX}" for queue in main_queues)}


def queue_resource(arn: dict[str, Any]) -> str:
    """The queue resource an event source names: ``${JobsQueue.Arn}`` (an Fn::Sub, so that it replaces Chalice's)."""
    return arn["Fn::Sub"].removeprefix("${").removesuffix(".Arn}")


def test_no_policy_grants_a_wildcard_action(template: dict[str, Any]) -> None:
    actions = [action for statement in statements(template) for action in as_list(statement.get("Action", []))]
    assert actions and not [action for action in actions if "*" in action]
    assert not [statement for statement in statements(template) if "NotAction" in statement]


def test_the_functions_role_reaches_only_the_stacks_own_resources(template: dict[str, Any]) -> None:
    (policy,) = template["Resources"]["DefaultRole"]["Properties"]["Policies"]
    for statement in policy["PolicyDocument"]["Statement"]:
        for resource in as_list(statement["Resource"]):
            if "Fn::GetAtt" in resource:
                names = [resource["Fn::GetAtt"][0]]
            else:  # every ${...} of the Sub but the pseudo parameters (AWS::Region and the like)
                names = [ref.split(".")[0] for ref in re.findall(r"\$\{([^}]+)\}", resource["Fn::Sub"])]
                names = [name for name in names if not name.startswith("AWS::")]
            assert names and all(name in template["Resources"] for name in names), (statement["Sid"], resource)


def statements(document: Any) -> Iterator[dict[str, Any]]:
    """Every statement of every policy document in the template."""
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "Statement":
                yield from as_list(value)
            else:
                yield from statements(value)
    elif isinstance(document, list):
        for item in document:
            yield from statements(item)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {**resources(template, "AWS::Serverless::Function"), **resources(template, "AWS::Lambda::Function")}


def runner_functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functions that run build jobs: every one whose handler is the runner's."""
    return {name: f for name, f in functions(template).items() if f["Properties"]["Handler"] == RUNNER_HANDLER}


def role_of(function: dict[str, Any]) -> str:
    return str(function["Properties"]["Role"]["Fn::GetAtt"][0])


def test_the_runner_function_runs_the_runner_handler_from_the_apps_package(template: dict[str, Any]) -> None:
    (runner,) = runner_functions(template).values()
    properties, run_jobs = runner["Properties"], template["Resources"]["RunJobs"]["Properties"]
    assert (properties["CodeUri"], properties["Runtime"]) == (run_jobs["CodeUri"], run_jobs["Runtime"])
    assert (properties["Timeout"], properties["MemorySize"]) == (900, 3008)
    variables = properties.get("Environment", {}).get("Variables", {})
    assert not [name for name in variables if name.startswith("CONVEYOR_")]  # no table, bucket, key or queue


def test_run_jobs_only_dispatches_so_it_is_short_and_small(template: dict[str, Any]) -> None:
    run_jobs = template["Resources"]["RunJobs"]["Properties"]
    assert (run_jobs["Timeout"], run_jobs["MemorySize"]) == (60, 128)  # 128 MB: Lambda's default


def control_plane_roles(template: dict[str, Any]) -> set[str]:
    runners = runner_functions(template)
    return {role_of(function) for name, function in functions(template).items() if name not in runners}


def log_groups_by_name(template: dict[str, Any]) -> dict[str, str]:
    return {
        group["Properties"]["LogGroupName"]: name for name, group in resources(template, "AWS::Logs::LogGroup").items()
    }


def assert_grants_nothing_but_logs(template: dict[str, Any], role: str, log_group: str) -> None:
    """``role`` is a role of its own, and all it grants is writing to ``log_group``."""
    assert role not in control_plane_roles(template)
    assert template["Resources"][role]["Type"] == "AWS::IAM::Role"
    own_logs = {"Fn::GetAtt": [log_group, "Arn"]}
    properties = template["Resources"][role]["Properties"]
    assert not properties.get("ManagedPolicyArns")
    granted = list(statements(properties["Policies"]))
    assert granted
    for statement in granted:
        actions = as_list(statement["Action"])
        assert statement["Effect"] == "Allow" and "NotResource" not in statement
        assert not [action for action in actions if action.startswith(STORAGE_SERVICES) or "*" in action]
        assert set(actions) <= LOG_ACTIONS, statement
        assert as_list(statement["Resource"]) == [own_logs], statement
    attached = [  # a policy of its own that names the role would grant more
        name
        for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
        for name, policy in resources(template, kind).items()
        if {"Ref": role} in policy["Properties"].get("Roles", [])
    ]
    assert attached == []


def test_the_runner_functions_role_grants_nothing_but_its_own_logs(template: dict[str, Any]) -> None:
    for runner in runner_functions(template).values():
        log_group = log_groups_by_name(template)[f"/aws/lambda/{runner['Properties']['FunctionName']}"]
        assert_grants_nothing_but_logs(template, role_of(runner), log_group)


def test_the_runners_invocations_are_never_retried(template: dict[str, Any]) -> None:
    configs = resources(template, "AWS::Lambda::EventInvokeConfig").values()
    for name in runner_functions(template):
        # The handler ends its process on purpose, which Lambda counts as a failure: a retry would rerun the job.
        (config,) = [
            config["Properties"] for config in configs if config["Properties"]["FunctionName"] == {"Ref": name}
        ]
        assert (config["Qualifier"], config["MaximumRetryAttempts"]) == ("$LATEST", 0)


def test_the_control_plane_may_invoke_the_runner_and_knows_where_to_send_it(template: dict[str, Any]) -> None:
    (runner,) = runner_functions(template)
    run_jobs = template["Resources"]["RunJobs"]["Properties"]
    invoking = [
        statement
        for statement in statements(template)
        if any(action.startswith("lambda:") for action in as_list(statement["Action"]))
    ]
    assert invoking == [
        {
            "Sid": "InvokeRunner",
            "Effect": "Allow",
            "Action": ["lambda:InvokeFunction"],
            "Resource": [{"Fn::GetAtt": [runner, "Arn"]}],
        }
    ]
    assert invoking[0] in statements(template["Resources"][role_of(template["Resources"]["RunJobs"])])
    for name, function in functions(template).items():
        if name == runner:
            continue
        variables = function["Properties"]["Environment"]["Variables"]
        assert variables["CONVEYOR_EXECUTOR"] == "lambda", name
        assert variables["CONVEYOR_RUNNER_FUNCTION"] == {"Ref": runner}, name
    endpoint = template["Outputs"]["EndpointURL"]["Value"]["Fn::Sub"]  # Chalice's: the API's URL, with a slash
    assert run_jobs["Environment"]["Variables"]["CONVEYOR_RUNNER_API_URL"] == {"Fn::Sub": endpoint.rstrip("/")}


def test_jobs_take_the_stages_limit_but_the_runner_only_what_leaves_it_time_to_report(
    template: dict[str, Any], prod_settings: None
) -> None:
    ((runner_name, runner),) = runner_functions(template).items()
    for name, function in functions(template).items():
        if name == runner_name:
            continue
        variables = function["Properties"]["Environment"]["Variables"]
        assert int(variables["CONVEYOR_JOB_TIMEOUT_SECONDS"]) == settings().job_timeout_seconds == 3600, name
        assert 0 < int(variables["CONVEYOR_RUNNER_TIMEOUT_SECONDS"]) < runner["Properties"]["Timeout"], name


def build_project(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The CodeBuild project container-image jobs run on: the stack has one."""
    ((name, project),) = resources(template, "AWS::CodeBuild::Project").items()
    return name, project["Properties"]


def test_the_build_projects_role_trusts_only_codebuild_and_grants_nothing_but_its_own_logs(
    template: dict[str, Any],
) -> None:
    _, project = build_project(template)
    role = project["ServiceRole"]["Fn::GetAtt"][0]
    log_group = project["LogsConfig"]["CloudWatchLogs"]["GroupName"]["Ref"]
    assert project["LogsConfig"]["CloudWatchLogs"]["Status"] == "ENABLED"
    assert template["Resources"][log_group]["Type"] == "AWS::Logs::LogGroup"
    assert_grants_nothing_but_logs(template, role, log_group)
    assert role not in {role_of(runner) for runner in runner_functions(template).values()}
    trust = template["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [(statement["Principal"], statement["Action"]) for statement in trust] == [
        ({"Service": "codebuild.amazonaws.com"}, "sts:AssumeRole")
    ]


def test_the_build_project_runs_the_buildspec_each_job_starts_with_unprivileged(template: dict[str, Any]) -> None:
    _, project = build_project(template)
    # The same as each job's StartBuild override, so a build started from the console runs the runner too.
    assert project["Source"] == {"Type": "NO_SOURCE", "BuildSpec": codebuild.BUILDSPEC}
    assert project["Artifacts"] == {"Type": "NO_ARTIFACTS"}
    environment = project["Environment"]
    assert (environment["Type"], environment["ComputeType"]) == ("LINUX_CONTAINER", codebuild.COMPUTE_TYPE)
    assert environment["PrivilegedMode"] is False  # no Docker daemon for a job's scripts
    assert environment["ImagePullCredentialsType"] == "CODEBUILD"  # the role pulls no image: it has no ECR
    assert project["QueuedTimeoutInMinutes"] == codebuild.QUEUED_TIMEOUT_MINUTES
    assert "ConcurrentBuildLimit" not in project  # with one, CodeBuild refuses builds beyond it instead of queueing


def test_the_control_plane_may_start_stop_and_watch_builds_of_its_project_only(template: dict[str, Any]) -> None:
    name, project = build_project(template)
    building = [
        statement
        for statement in statements(template)
        if any(action.startswith("codebuild:") for action in as_list(statement["Action"]))
    ]
    assert len(building) == 1
    assert set(building[0]["Action"]) == BUILD_ACTIONS
    assert building[0]["Resource"] == [{"Fn::GetAtt": [name, "Arn"]}]
    assert building[0] in statements(template["Resources"][role_of(template["Resources"]["RunJobs"])])
    # no build is started under another role than the project's own
    assert not [statement for statement in statements(template) if "iam:PassRole" in as_list(statement["Action"])]
    runners = runner_functions(template)
    for function_name, function in functions(template).items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        expected = None if function_name in runners else {"Ref": name}  # a project's Ref is its name
        assert variables.get("CONVEYOR_CODEBUILD_PROJECT") == expected, function_name
    assert project["Name"] == f"{CONFIG['app_name']}-{STAGE}-builds"


def test_no_resource_depends_on_itself(template: dict[str, Any]) -> None:
    """CloudFormation refuses a cycle (the API's handler cannot name the API's URL: the API names the handler);
    cfn-lint does not see one through SAM's resources."""
    names = set(template["Resources"])
    needs = {
        name: (references(resource.get("Properties", {})) | set(as_list(resource.get("DependsOn", [])))) & names
        for name, resource in template["Resources"].items()
    }
    assert cycle(needs) is None


def references(value: Any) -> set[str]:
    """The resources ``value`` refers to: by Ref, Fn::GetAtt, or a ${...} of an Fn::Sub."""
    if isinstance(value, list):
        return {name for item in value for name in references(item)}
    if not isinstance(value, dict):
        return set()
    found: set[str] = set()
    for key, item in value.items():
        if key == "Ref":
            found.add(item.split(".")[0])
        elif key == "Fn::GetAtt":
            found.add(item[0] if isinstance(item, list) else item.split(".")[0])
        elif key == "Fn::Sub":
            text, variables = (item[0], item[1]) if isinstance(item, list) else (item, {})
            found |= {ref.split(".")[0] for ref in re.findall(r"\$\{([^}!]+)\}", text)} - set(variables)
            found |= references(variables)
        else:
            found |= references(item)
    return found


def cycle(needs: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph, if it has one."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return path[path.index(name) :] + [name]
        if name in done:
            return None
        for needed in sorted(needs[name]):
            found = visit(needed, [*path, name])
            if found:
                return found
        done.add(name)
        return None

    return next((found for name in sorted(needs) if (found := visit(name, []))), None)


def test_the_bucket_key_and_schedule_are_the_stages(template: dict[str, Any], prod_settings: None) -> None:
    (bucket,) = resources(template, "AWS::S3::Bucket").values()
    assert bucket["Properties"]["BucketName"] == settings().bucket
    assert "VersioningConfiguration" not in bucket["Properties"]
    assert all(bucket["Properties"]["PublicAccessBlockConfiguration"].values())
    prefixes = [rule["Prefix"] for rule in bucket["Properties"]["LifecycleConfiguration"]["Rules"] if "Prefix" in rule]
    assert sorted(prefixes) == sorted(
        {build_prefix(1, 2, 3).split("/")[0] + "/", project_cache_prefix(1, 2).split("/")[0] + "/"}
    )
    aliases = {alias["Properties"]["AliasName"] for alias in resources(template, "AWS::KMS::Alias").values()}
    assert aliases == {settings().kms_key, settings().oidc_signing_key}
    schedules = [
        event["Properties"]["Schedule"]
        for function in resources(template, "AWS::Serverless::Function").values()
        for event in function["Properties"].get("Events", {}).values()
        if event["Type"] == "Schedule"
    ]
    # the lease sweep every minute; scheduled builds at the start of each minute, when a schedule's run is due
    assert sorted(schedules) == ["cron(* * * * ? *)", "rate(1 minute)"]


def test_the_lambda_package_leaves_out_boto3_and_development_packages() -> None:
    bundled = {requirement.split("==")[0] for requirement in lambda_requirements()}
    assert {"pynamodb", "dulwich", "pyyaml", "azure-storage-blob"} <= bundled
    assert not bundled & {"boto3", "botocore", "s3transfer", "chalice", "moto", "pytest", "pip", "setuptools", "click"}


def test_a_custom_domain_maps_the_apis_stage_at_the_root(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT_DIR / "chalicelib", project / "chalicelib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(PROJECT_DIR / "app.py", project / "app.py")
    config = json.loads(json.dumps(CONFIG))
    config["stages"][STAGE]["api_gateway_endpoint_type"] = "REGIONAL"
    config["stages"][STAGE]["environment_variables"]["CONVEYOR_BASE_URL"] = "https://ci.example.com/"
    config["stages"][STAGE]["api_gateway_custom_domain"] = {
        "domain_name": "ci.example.com",
        "certificate_arn": "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789",
        "tls_version": "TLS_1_2",
    }
    (project / ".chalice").mkdir()
    (project / ".chalice" / "config.json").write_text(json.dumps(config))
    template = package(tmp_path / "out", project)

    mapping = template["Resources"]["ApiGatewayCustomDomainMapping"]["Properties"]
    assert mapping["BasePath"] == "(none)"  # so paths start with /api, without the stage's /prod
    assert mapping["Stage"] == {"Ref": "RestAPI.Stage"}  # SAM's reference: created after the stage
    runner_api_url = template["Resources"]["RunJobs"]["Properties"]["Environment"]["Variables"][
        "CONVEYOR_RUNNER_API_URL"
    ]
    assert runner_api_url == "https://ci.example.com"  # the stage's own base URL: runners call the custom domain
    assert lint_errors(tmp_path / "out" / "sam.json") == []


def test_the_template_makes_the_id_token_signing_key_which_only_the_control_plane_may_use(
    template: dict[str, Any], prod_settings: None
) -> None:
    """Jobs' ID tokens (issue 39) are signed in KMS by an asymmetric key of the stack's own: the functions' role may
    sign with it and read its public half, nothing more; what runs builds may not touch it (nor any key)."""
    keys = resources(template, "AWS::KMS::Key")
    (alias,) = [a for a in resources(template, "AWS::KMS::Alias").values() if "oidc" in a["Properties"]["AliasName"]]
    assert alias["Properties"]["AliasName"] == settings().oidc_signing_key
    signing_key = keys[alias["Properties"]["TargetKeyId"]["Ref"]]
    assert signing_key["Properties"]["KeySpec"] == "RSA_2048"
    assert signing_key["Properties"]["KeyUsage"] == "SIGN_VERIFY"
    assert signing_key["DeletionPolicy"] == "Retain"
    (policy,) = template["Resources"]["DefaultRole"]["Properties"]["Policies"]
    granted = [
        statement
        for statement in policy["PolicyDocument"]["Statement"]
        if {"Fn::GetAtt": [alias["Properties"]["TargetKeyId"]["Ref"], "Arn"]} in as_list(statement["Resource"])
    ]
    assert [sorted(as_list(statement["Action"])) for statement in granted] == [["kms:GetPublicKey", "kms:Sign"]]
    for runner in runner_functions(template).values():
        role = template["Resources"][role_of(runner)]
        runner_actions = [action for statement in statements(role) for action in as_list(statement["Action"])]
        assert not [action for action in runner_actions if action.startswith("kms:")]


def test_the_build_images_repository_lets_only_the_stages_build_project_pull_and_the_control_plane_knows_it(
    template: dict[str, Any],
) -> None:
    project_name, project = build_project(template)
    ((name, repository),) = resources(template, "AWS::ECR::Repository").items()
    assert repository["DeletionPolicy"] == "Retain"  # pushed by hand: deleting the stack keeps the images
    (pull,) = repository["Properties"]["RepositoryPolicyText"]["Statement"]
    assert pull["Principal"] == {"Service": "codebuild.amazonaws.com"}
    assert sorted(pull["Action"]) == [
        "ecr:BatchCheckLayerAvailability",
        "ecr:BatchGetImage",
        "ecr:GetDownloadUrlForLayer",
    ]
    assert pull["Condition"]["ArnEquals"]["aws:SourceArn"] == {"Fn::GetAtt": [project_name, "Arn"]}
    assert pull["Condition"]["StringEquals"]["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}
    assert project["Environment"]["ImagePullCredentialsType"] == "CODEBUILD"  # the role still reaches no registry
    assert not [
        s for s in statements(template) if any(a.startswith("ecr:") for a in as_list(s["Action"])) and s != pull
    ]
    runners = runner_functions(template)
    for function_name, function in functions(template).items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        expected = None if function_name in runners else {"Fn::GetAtt": [name, "RepositoryUri"]}
        assert variables.get("CONVEYOR_IMAGE_REPOSITORY") == expected, function_name
    assert template["Outputs"]["ImageRepository"] == {"Value": {"Fn::GetAtt": [name, "RepositoryUri"]}}
