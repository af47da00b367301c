"""Every executor kind, one line each (its module beside this one implements executors/kind.py's ExecutorKind), and
the lookup the domain asks them through, by the name a job stores.

Adding an executor: its module here, its line in KINDS, its route in executors/images.py, its row in
docs/executors.md and a test (docs/map.md).
"""

from __future__ import annotations

from chalicelib.executors.kind import ExecutorKind
from chalicelib.executors.kinds import build_agent, codebuild, service_runner

KINDS: tuple[ExecutorKind, ...] = (
    service_runner.SERVICE_RUNNER,
    codebuild.CODEBUILD,
    build_agent.BUILD_AGENT,
)
_BY_NAME = {kind.name: kind for kind in KINDS}


def of(executor: str | None) -> ExecutorKind:
    """The kind of a job's ``executor``; the service's runner for a job queued before executors were chosen (None),
    which it is placed on when dispatched."""
    return _BY_NAME.get(executor or "") or service_runner.SERVICE_RUNNER
