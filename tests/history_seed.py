"""A project's tests seeded straight into the store, in the shape job finishes write (store/tests_history.py): for
reads measured at sizes that real job finishes would take minutes to reach (tests and bench)."""

from __future__ import annotations

import random

from chalicelib.core import flakiness
from chalicelib.domain.testing.tests_history import test_id_of
from chalicelib.store.models import TestHistoryModel
from chalicelib.store.tests_history import SUMMARY, WORKING


def seed_tests(project_id: int, tests: int, runs: int) -> list[str]:
    """``tests`` tests of ``runs`` runs each (one in 20 failing, every tenth test flaky), realistic names; their
    ids."""
    chooser = random.Random(project_id)
    ids = []
    with TestHistoryModel.batch_write() as batch:
        for index in range(tests):
            name = f"tests.integration.test_module_{index // 20:03d}.TestCase{index % 7}.test_behaviour_{index:05d}"
            state = flakiness.TestState(name=name, framework="JUnit", file_name=f"tests/test_module_{index // 20}.py")
            test_id = test_id_of(state.framework, state.file_name, name)
            ids.append(test_id)
            for number in range(runs):
                failed = chooser.random() < 0.05 or (index % 10 == 0 and number == runs - 2)
                commit = f"{number // 2:040x}"
                run = flakiness.Run(
                    at=1_760_000_000 + number * 600,
                    outcome="Failed" if failed else "Passed",
                    duration=chooser.randint(1, 5000),
                    commit=commit,
                    branch="main",
                    job_name="Environment: PYTHON=3.11",
                    build_id=number + 1,
                    build_version=f"1.0.{number + 1}",
                    job_id=f"job{number:08d}",
                    attempt=1,
                    error="AssertionError: expected 3, got 2" if failed else None,
                )
                flakiness.record(state, run)
            key = f"p#{project_id}"
            batch.save(TestHistoryModel(key, WORKING + test_id, body=flakiness.state_json(state), version=1))
            batch.save(TestHistoryModel(key, SUMMARY + test_id, body=flakiness.summary(state, test_id)))
    return ids
