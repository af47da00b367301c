"""Creating the service's tables where they are missing (local stack and tests; deployed stages use
the CloudFormation template)."""

from __future__ import annotations

from chalicelib.store.models import ALL_MODELS


def ensure_tables() -> list[str]:
    """Create every table that does not exist yet; returns the names of those it created."""
    created = []
    for model in ALL_MODELS:
        if not model.exists():
            model.create_table(billing_mode="PAY_PER_REQUEST", wait=True)
            created.append(model.Meta.table_name)
    return created
