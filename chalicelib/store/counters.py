"""Atomic sequences kept in the counters table."""

from __future__ import annotations

from chalicelib.store.models import CounterModel

# Users and roles share one sequence so that GET /api/users/{id} can tell them apart by id alone.
PRINCIPALS = "principals"
ACCOUNTS = "accounts"
PROJECTS = "projects"
BUILDS = "builds"
DEPLOYMENTS = "deployments"
ENVIRONMENTS = "environments"
BUILD_AGENTS = "build-agents"


def next_value(sequence: str, count: int = 1) -> int:
    """Reserve ``count`` values of ``sequence``; returns the last one (an atomic ADD, never reused)."""
    counter = CounterModel(sequence)
    counter.update(actions=[CounterModel.value.add(count)])
    return int(counter.value)
