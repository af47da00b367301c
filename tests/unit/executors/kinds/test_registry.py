"""The executor kinds' registry: every kind implements the one interface, each name a job stores is one kind, and a
job queued before executors were chosen is the service's runner's. No IO."""

from __future__ import annotations

import importlib
import pkgutil

from chalicelib.core.jobs import Executor
from chalicelib.executors import kinds
from chalicelib.executors.kind import ExecutorKind
from chalicelib.executors.kinds import build_agent, codebuild, service_runner


def test_every_kind_module_is_registered_and_every_registered_kind_is_a_kind() -> None:
    names = [f"{kinds.__name__}.{info.name}" for info in pkgutil.iter_modules(kinds.__path__)]
    modules = [importlib.import_module(name) for name in names]
    declared = {value for module in modules for value in vars(module).values() if isinstance(value, ExecutorKind)}

    assert {build_agent, codebuild, service_runner} <= set(modules)
    assert declared == set(kinds.KINDS)  # a kind's module declares it, and its line lists it


def test_each_executor_a_job_stores_names_one_kind() -> None:
    names = [kind.name for kind in kinds.KINDS]

    assert sorted(names) == sorted(Executor) and len(set(names)) == len(names)
    assert all(kinds.of(kind.name) is kind for kind in kinds.KINDS)
    assert kinds.of(str(Executor.CODEBUILD)) is codebuild.CODEBUILD  # as the store reads it back: a plain str


def test_a_job_queued_before_executors_were_chosen_is_the_service_runners() -> None:
    assert kinds.of(None) is service_runner.SERVICE_RUNNER


def test_only_build_agents_take_their_jobs_themselves_and_provide_their_own_setup() -> None:
    assert [kind.name for kind in kinds.KINDS if kind.pulled] == [Executor.AGENT]
    assert [kind.name for kind in kinds.KINDS if kind.provides_setup] == [Executor.AGENT]


def test_only_the_service_runners_jobs_end_with_the_service() -> None:
    assert [kind.name for kind in kinds.KINDS if kind.runs_in_service] == [Executor.RUNNER]
