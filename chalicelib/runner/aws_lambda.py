"""The runner function's handler: one job per execution environment, then the environment is discarded.

Lambda reuses a warm environment for later invocations, /tmp and leftover processes included, so a build's
leftovers would meet the next job (its token, its secrets, another tenant's code). The handler therefore starts
from an empty /tmp, and after reporting it kills every other process it can and ends its own process: Lambda
then starts a fresh environment for the next invocation. The function's role grants nothing but its own logs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from chalicelib.runner.job import run_ticket
from chalicelib.runner.protocol import Ticket

log = logging.getLogger(__name__)
SCRATCH = Path(tempfile.gettempdir())


def handler(event: dict[str, Any], context: Any) -> None:
    """Run the job of the ticket in ``event``, then end this execution environment."""
    try:
        empty_folder(SCRATCH)
        run_ticket(Ticket.from_json(json.dumps(event)), work=Path(tempfile.mkdtemp(dir=SCRATCH)))
    except Exception:  # logged here: the process ends below, before the error could reach Lambda's runtime
        log.exception("the runner failed; its job ends when its lease does")
    finally:
        discard_environment()


def empty_folder(folder: Path) -> None:
    """Remove everything inside ``folder``, which stays."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def discard_environment() -> None:
    """Kill every process this one may signal (whatever the build left running), empty /tmp, and exit."""
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):  # only where this process is all there is (never on a host)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # none left, or none this user may signal
            os.kill(-1, signal.SIGKILL)  # every process of this user but this one: the build's leftovers
    empty_folder(SCRATCH)
    for stream in (sys.stdout, sys.stderr):  # os._exit flushes nothing: what is buffered would never reach the log
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)
