"""The runner function's handler: one job per execution environment, then the environment is discarded.

Lambda reuses a warm environment for later invocations, /tmp and leftover processes included, so a build's
leftovers would meet the next job (its token, its secrets, another tenant's code). The handler therefore starts
from an empty /tmp (a job whose /tmp cannot be emptied fails unrun, and so does the invocation), and after
reporting it kills every other process it can and ends its own process: Lambda then starts a fresh environment
for the next invocation. The function's role grants nothing but its own logs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.job import run_ticket
from chalicelib.runner.protocol import JobClient, ProtocolError

log = logging.getLogger(__name__)
SCRATCH = Path(tempfile.gettempdir())


class ScratchNotEmpty(Exception):
    """What a build left in /tmp that the runner could not remove."""


def handler(event: dict[str, Any], context: Any) -> None:
    """Run the job of the ticket in ``event``, then end this execution environment."""
    started = False
    try:
        ticket = Ticket.from_json(json.dumps(event))
        started = start_clean(ticket)
        if started:
            run_ticket(ticket, work=Path(tempfile.mkdtemp(dir=SCRATCH)))
    except Exception:  # logged here: the process ends below, before the error could reach Lambda's runtime
        log.exception("the runner failed; its job ends when its lease does")
    finally:
        discard_environment(failed=not started)


def start_clean(ticket: Ticket) -> bool:
    """Empty /tmp for the ticket's job; if an earlier job left what cannot be removed, fail the job unrun."""
    try:
        empty_folder(SCRATCH)
        return True
    except ScratchNotEmpty as error:
        # the names go to the runner's own log only: an earlier job's files, maybe another tenant's
        log.error("job %s does not run: %s", ticket.job_id, error)
        message = "The runner's scratch folder could not be emptied of an earlier job's files; the job did not run."
        with contextlib.suppress(ProtocolError):  # then the job ends when its lease does
            JobClient(ticket).finish("failed", message, 1, [], log_tail=f"{message}\n".encode(), log_tail_sent=False)
        return False


def empty_folder(folder: Path) -> None:
    """Remove everything inside ``folder``, which stays; raise ScratchNotEmpty if anything is left.

    A build may leave folders its own user may not enter or change (mode 000, or read-only as Go's module cache
    is), which removal as that user would skip: their owner, the runner's user, gives itself the rights back first.
    """
    _let_owner_in(folder)
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink(missing_ok=True)
    left = sorted(entry.name for entry in folder.iterdir())
    if left:
        raise ScratchNotEmpty(f"left in {folder}: {', '.join(left[:5])}{' ...' if len(left) > 5 else ''}")


def _let_owner_in(folder: Path) -> None:
    """Give the owner read, write and search on ``folder`` and every folder under it (no symbolic link followed);
    what another user owns keeps its mode. The build's processes are gone by then, so none swaps a folder for a
    link between the check and the chmod."""
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            mode = current.lstat().st_mode
            if not stat.S_ISDIR(mode):
                continue
            if mode & stat.S_IRWXU != stat.S_IRWXU:
                current.chmod(stat.S_IMODE(mode) | stat.S_IRWXU)
            with os.scandir(current) as entries:
                pending.extend(Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False))
        except OSError:  # not its owner, or gone: the check after removal tells
            continue


def discard_environment(failed: bool = False) -> None:
    """Kill every process this one may signal (whatever the build left running), empty /tmp, and exit: with 1 if
    ``failed`` or /tmp could not be emptied, so that the invocation counts as failed."""
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):  # only where this process is all there is (never on a host)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # none left, or none this user may signal
            os.kill(-1, signal.SIGKILL)  # every process of this user but this one: the build's leftovers
    try:
        empty_folder(SCRATCH)
    except ScratchNotEmpty as error:
        log.error("the next job will not run here: %s", error)
        failed = True
    for stream in (sys.stdout, sys.stderr):  # os._exit flushes nothing: what is buffered would never reach the log
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(1 if failed else 0)
