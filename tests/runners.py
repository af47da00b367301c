"""A job's runner started by a test as an executor starts it: the job claimed and its token minted as dispatch
does, then ``python -m chalicelib.runner`` in a process of its own with the ticket on standard input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from chalicelib.domain.execution import progress
from chalicelib.domain.job_identity.job_tokens import keys_of, mint_token
from chalicelib.protocol.ticket import Ticket
from chalicelib.store import job_moves
from chalicelib.store import jobs as job_store


def dispatch(job_id: str, api_url: str, lease_seconds: int = 120) -> Ticket:
    """Claim a queued job and mint its token, as domain/execution/dispatch.py does; the ticket an executor would get."""
    queued = job_store.get_job(job_id)
    assert queued is not None
    token = mint_token(keys_of(queued))
    assert job_moves.claim_job(job_id, int(time.time()) + lease_seconds, token.token_hash), "the job was not queued"
    job = job_store.get_job(job_id)
    assert job is not None
    progress.refresh_build(job.project_id, job.build_id)
    return Ticket(api_url, job_id, token.token)


class RunnerProcess:
    """The runner of one ticket in a process of its own (no sandbox), which a test may kill outright."""

    def __init__(self, ticket: Ticket) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "chalicelib.runner"],
            env={name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ},
            start_new_session=True,  # its scripts die with it
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(ticket.to_json().encode())
        self.process.stdin.close()
        self.process.stdin = None  # given: communicate() has nothing more to send

    def kill(self) -> None:
        """SIGKILL the runner and everything it started: no clean-up code runs."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def wait(self, seconds: float) -> str:
        """Its exit (a failure if it did not exit 0 within ``seconds``); returns what it printed."""
        output, _ = self.process.communicate(timeout=seconds)
        text = output.decode(errors="replace")
        assert self.process.returncode == 0, text
        return text
