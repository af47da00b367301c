"""Where build jobs run. Each executor is handed a job's ticket (the API's URL, the job id, its job token) and
nothing else of the service, and runs the one runner program with it (``python -m chalicelib.runner``).

- ``local``: a sandboxed process on this machine (runner/sandbox.py), for ``make run`` and the tests.
- ``lambda``: the runner function of the packaged template, invoked asynchronously (executors/aws_lambda.py);
  its role grants nothing but its own logs.
"""

from __future__ import annotations

from chalicelib.config import settings
from chalicelib.runner.protocol import Ticket

_GRACE_SECONDS = 120  # beyond the job's own limit, before the local executor kills a runner that did not stop


def run(ticket: Ticket) -> None:
    """Hand the ticket to the stage's executor: the local one returns when the job's runner has ended."""
    config = settings()
    if config.executor == "lambda":
        from chalicelib.executors import aws_lambda

        aws_lambda.start(ticket, config.runner_function)
        return
    from chalicelib.runner import sandbox as local

    local.run(ticket, config.unsafe_no_sandbox, config.job_timeout_seconds + _GRACE_SECONDS)


def refusal() -> str | None:
    """Why jobs cannot be run here now (no sandbox, and no unsafe setting); None when they can."""
    config = settings()
    if config.executor != "local":
        return None
    from chalicelib.runner import sandbox as local

    try:
        local.check(config.unsafe_no_sandbox)
    except local.SandboxUnavailable as error:
        return str(error)
    return None
