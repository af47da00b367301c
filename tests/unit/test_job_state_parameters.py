"""No function on the path where jobs and builds change status takes more than 6 parameters: what comes with a
job's move travels as one ``MoveFields`` (core/jobs.py), not field by field through every signature (issue 37)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

MOST_PARAMETERS = 6

# Where jobs and builds change status: a job's moves and its build's state that follows (progress, job_moves,
# build_states), who moves them (a start, a re-run, a cancel, a dispatch, a lost lease, a refusal, an agent's
# claim and finish, max_jobs' slots, a webhook's build and rolling cancel), and the store's reads and writes of
# jobs. Each is imported by its name: one that moves fails the import here until its new name is written, never
# drops out of the check unseen.
STATE_PATH = [
    "chalicelib.core.jobs",
    "chalicelib.core.status",
    "chalicelib.domain.execution.progress",
    "chalicelib.domain.execution.lost_jobs",
    "chalicelib.domain.execution.dispatch",
    "chalicelib.domain.execution.routing",
    "chalicelib.domain.execution.job_slots",
    "chalicelib.domain.builds.builds",
    "chalicelib.domain.execution.build_agents",
    "chalicelib.domain.deployments.deployment_agents",
    "chalicelib.domain.deployments.deployment_jobs",
    "chalicelib.domain.triggers.webhooks",
    "chalicelib.domain.job_protocol.job_specs",  # a runner starting its job
    "chalicelib.domain.job_protocol.runner_calls",  # a runner finishing its job
    "chalicelib.store.jobs",
    "chalicelib.store.job_moves",
    "chalicelib.store.build_states",
    "chalicelib.store.job_slots",
]


def _functions(module: ModuleType) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The module's own functions, and the methods its own classes define (not those dataclasses write)."""
    for name, member in vars(module).items():
        if inspect.isfunction(member) and member.__module__ == module.__name__:
            yield f"{module.__name__}.{name}", member
        elif inspect.isclass(member) and member.__module__ == module.__name__:
            for method_name, method in vars(member).items():
                function = getattr(method, "__func__", method)  # a classmethod's or staticmethod's function
                if inspect.isfunction(function) and not method_name.startswith("__"):
                    yield f"{module.__name__}.{name}.{method_name}", function


def _parameters(function: Callable[..., Any]) -> int:
    """How many parameters a caller may pass (a method's self or cls is not one)."""
    names = list(inspect.signature(function).parameters)
    return len(names) - (names[:1] in (["self"], ["cls"]))


def test_no_function_on_the_job_and_build_state_path_takes_more_than_six_parameters() -> None:
    modules = [importlib.import_module(name) for name in STATE_PATH]
    counted = {name: _parameters(function) for module in modules for name, function in _functions(module)}

    offenders = {name: count for name, count in counted.items() if count > MOST_PARAMETERS}

    assert not offenders, "more than 6 parameters: " + ", ".join(
        f"{name} ({n})" for name, n in sorted(offenders.items())
    )
    assert "chalicelib.domain.execution.progress.move_in_build" in counted  # the walk finds what it is meant to check


def test_the_count_leaves_out_self_and_counts_keyword_only_parameters() -> None:
    class Mover:
        def move(self, job: Any, event: Any, *, fields: Any = None) -> None: ...

    def seven(a: Any, b: Any, c: Any, d: Any, e: Any, *, f: Any = None, g: Any = None) -> None: ...

    assert _parameters(Mover.move) == 3
    assert _parameters(seven) == 7
