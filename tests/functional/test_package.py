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
from chalicelib.local.resources import DEAD_LETTER_SUFFIX, MAX_RECEIVES
from chalicelib.store.blobs import build_prefix, project_cache_prefix
from chalicelib.store.models import ALL_MODELS
from infra.package import lambda_requirements

PROJECT_DIR = Path(__file__).resolve().parents[2]
CONFIG = json.loads((PROJECT_DIR / ".chalice" / "config.json").read_text())
STAGE = "prod"


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


def test_the_bucket_key_and_schedule_are_the_stages(template: dict[str, Any], prod_settings: None) -> None:
    (bucket,) = resources(template, "AWS::S3::Bucket").values()
    assert bucket["Properties"]["BucketName"] == settings().bucket
    assert "VersioningConfiguration" not in bucket["Properties"]
    assert all(bucket["Properties"]["PublicAccessBlockConfiguration"].values())
    prefixes = [rule["Prefix"] for rule in bucket["Properties"]["LifecycleConfiguration"]["Rules"] if "Prefix" in rule]
    assert sorted(prefixes) == sorted(
        {build_prefix(1, 2, 3).split("/")[0] + "/", project_cache_prefix(1, 2).split("/")[0] + "/"}
    )
    (alias,) = resources(template, "AWS::KMS::Alias").values()
    assert alias["Properties"]["AliasName"] == settings().kms_key
    schedules = [
        event["Properties"]["Schedule"]
        for function in resources(template, "AWS::Serverless::Function").values()
        for event in function["Properties"].get("Events", {}).values()
        if event["Type"] == "Schedule"
    ]
    assert schedules == ["rate(1 minute)"]


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
    assert lint_errors(tmp_path / "out" / "sam.json") == []
