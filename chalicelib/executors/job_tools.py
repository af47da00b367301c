"""The local container executor's part before a job's container starts: the releases of the machine's tool cache its
``stack:`` asks for (executors/tool_cache.py), installed outside the job, while the executor renews the job's lease
as its runner renews it later, so that a cancel or a lost lease stops the install and no container starts."""

from __future__ import annotations

import logging
import time

from chalicelib.executors import tool_cache, tool_install
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.protocol import JobClient, ProtocolError, TokenRevoked, cancel_of

log = logging.getLogger(__name__)


def fill(ticket: Ticket, deadline: float) -> tool_cache.Filled:
    """Install what the job's stack: asks for into the machine's tool cache before its container starts (outside
    it: the job only reads the cache); its releases, and the job's log lines for what it has not. Meanwhile the job's
    lease is renewed, as its runner renews it later, and a cancel (or a lease lost) stops the install: Ended. A
    spec that cannot be read now leaves it to the runner, which says why; a token that no longer works ends the job
    here: no container starts for a job that has ended."""
    tool_cache.root().mkdir(mode=0o755, parents=True, exist_ok=True)
    tool_cache.root().chmod(0o755)  # public packages, read by every container's users (root here is none of them)
    client = JobClient(ticket)
    try:
        spec = client.spec()
    except TokenRevoked:
        raise Ended(None) from None
    except ProtocolError:
        return tool_cache.Filled()
    lease = Lease(client, ticket.job_id, float(spec["heartbeatSeconds"] or 5))
    try:
        return tool_cache.ensure(tool_cache.wanted(dict(spec["configuration"])), deadline, lease.ended)
    except tool_install.JobEnded:
        raise Ended(lease.cancel) from None


class Ended(Exception):
    """The job ended before its container started: cancelled (``cancel``: why), or its lease lost (None)."""

    def __init__(self, cancel: str | None) -> None:
        super().__init__(cancel)
        self.cancel = cancel


class Lease:
    """A job's lease, renewed every ``seconds`` while the executor works for it, as its runner renews it."""

    def __init__(self, client: JobClient, job_id: str, seconds: float) -> None:
        self._client = client
        self._job_id = job_id
        self._seconds = seconds
        self._next = time.monotonic() + seconds
        self.cancel: str | None = None  # why the job is being cancelled, once a renewal said so

    def ended(self) -> bool:
        """Whether the job has ended: a renewal (when one is due) answered that it is cancelled, or that its token
        no longer works (its lease was lost). A renewal that fails otherwise is tried again at the next."""
        if time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + self._seconds
        try:
            status, why = self._client.heartbeat()
        except TokenRevoked:
            return True
        except ProtocolError:
            log.warning("job %s: renewing its lease failed", self._job_id, exc_info=True)
            return False
        self.cancel = cancel_of(status, why) or self.cancel
        return self.cancel is not None
