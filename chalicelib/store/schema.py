"""Creating the service's tables where they are missing (local stack and tests; deployed stages use
the CloudFormation template), and the indexes a newer version added to a table made before it."""

from __future__ import annotations

import time
from typing import Any

from pynamodb.models import Model

from chalicelib import aws
from chalicelib.store.delivery_models import (
    BuildAgentModel,
    DeploymentModel,
    EnvironmentModel,
    JobReportModel,
    OutboxModel,
)
from chalicelib.store.models import (
    AccountModel,
    ApiKeyModel,
    BuildModel,
    CounterModel,
    JobModel,
    MemberModel,
    ProjectModel,
    RoleModel,
    SessionModel,
    TestHistoryModel,
    UniqueModel,
)

ALL_MODELS: tuple[type[Model], ...] = (  # every table
    CounterModel,
    UniqueModel,
    AccountModel,
    MemberModel,
    RoleModel,
    ApiKeyModel,
    SessionModel,
    ProjectModel,
    BuildModel,
    JobModel,
    BuildAgentModel,
    JobReportModel,
    EnvironmentModel,
    DeploymentModel,
    OutboxModel,
    TestHistoryModel,
)


def ensure_tables() -> list[str]:
    """Create every table that does not exist yet, and every index missing from one that does; returns the names
    of the tables it created."""
    created = []
    for model in ALL_MODELS:
        if not model.exists():
            model.create_table(billing_mode="PAY_PER_REQUEST", wait=True)
            created.append(model.Meta.table_name)
        else:
            _add_missing_indexes(model.Meta.table_name, model._get_schema())
    return created


def _add_missing_indexes(table: str, schema: Any) -> None:
    """An endpoint kept from an older version (AWS_ENDPOINT_URL) gets the indexes added since, one at a time as
    DynamoDB takes them; a Query on a missing one would fail."""
    dynamodb = aws.client("dynamodb")
    described = dynamodb.describe_table(TableName=table)["Table"]
    present = {index["IndexName"] for index in described.get("GlobalSecondaryIndexes", [])}
    for index in schema["global_secondary_indexes"]:
        if index["index_name"] in present:
            continue
        dynamodb.update_table(
            TableName=table,
            AttributeDefinitions=index["attribute_definitions"],
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": index["index_name"],
                        "KeySchema": index["key_schema"],
                        "Projection": index["projection"],
                    }
                }
            ],
        )
        _wait_until_active(dynamodb, table)


def _wait_until_active(dynamodb: Any, table: str, seconds: int = 600) -> None:
    """Until the table and every index of it are ACTIVE: DynamoDB builds one new index at a time."""
    for _ in range(seconds):
        described = dynamodb.describe_table(TableName=table)["Table"]
        statuses = [index.get("IndexStatus") for index in described.get("GlobalSecondaryIndexes", [])]
        if described["TableStatus"] == "ACTIVE" and all(status == "ACTIVE" for status in statuses):
            return
        time.sleep(1)
    raise TimeoutError(f"the table {table} or an index of it is still being built after {seconds} s")
