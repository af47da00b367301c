"""How many of a queue's batches the local stack handles at once, from its environment (chalicelib/local/stack.py)."""

from __future__ import annotations

import pytest

from chalicelib.local.pump import DEFAULT_MAX_CONCURRENCY
from chalicelib.local.stack import LocalOptions


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The environment with neither setting of the pump's concurrency."""
    monkeypatch.delenv("CONVEYOR_MAX_CONCURRENCY", raising=False)
    monkeypatch.delenv("CONVEYOR_WORKERS", raising=False)
    return monkeypatch


def test_a_stack_scales_each_queue_to_a_burst_of_fifty_builds_unless_told_otherwise(
    environment: pytest.MonkeyPatch,
) -> None:
    assert LocalOptions.from_environment().max_concurrency == DEFAULT_MAX_CONCURRENCY >= 50


def test_conveyor_max_concurrency_sets_each_queues_maximum(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("CONVEYOR_MAX_CONCURRENCY", "8")

    assert LocalOptions.from_environment().max_concurrency == 8


def test_conveyor_workers_set_before_still_caps_the_jobs_running_at_once(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("CONVEYOR_WORKERS", "1")

    assert LocalOptions.from_environment().max_concurrency == 1


def test_conveyor_max_concurrency_wins_over_conveyor_workers(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("CONVEYOR_WORKERS", "1")
    environment.setenv("CONVEYOR_MAX_CONCURRENCY", "16")

    assert LocalOptions.from_environment().max_concurrency == 16
