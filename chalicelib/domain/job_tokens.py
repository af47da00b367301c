"""A runner's one credential: a token per claimed job, and the lease it renews.

A token is minted when the job is dispatched (``mint_token``), stored only as its SHA-256 on the job, and works
while the job runs: ending the job (however it ends, a lost lease included) removes it. A token for one job names
no other: every operation finds the job by the id in the path and compares the token with that job's.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from chalicelib.config import settings
from chalicelib.core.jobs import Job
from chalicelib.core.status import Status
from chalicelib.errors import Unauthorized
from chalicelib.store import jobs as job_store

TOKEN_PREFIX = "cvyj_"


@dataclass(frozen=True)
class NewToken:
    token: str  # handed to the runner in its ticket, never stored
    token_hash: str  # stored on the job


def mint_token() -> NewToken:
    """A fresh job token: 256 random bits."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return NewToken(token, _hash(token))


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def runner_job(job_id: str, authorization: str | None) -> Job:
    """The job a request's token was minted for; Unauthorized for any other job, or once the job has ended."""
    token = _bearer(authorization)
    stored, job = job_store.job_token_hash(job_id) if job_id else (None, None)
    if job is None or stored is None or not hmac.compare_digest(stored, _hash(token)):
        raise Unauthorized("The job token is not valid for this job.")
    # a lease that ran out is lost once the sweeper ends the job (which removes the token); until then a late
    # heartbeat renews it, so a slow network costs no job
    if job.status not in (Status.RUNNING, Status.CANCELLING):
        raise Unauthorized("The job has ended: its token no longer works.")
    return job


def heartbeat(job_id: str, authorization: str | None) -> str:
    """Extend the lease, while the token is the job's and the job runs; its status says go on ("running") or stop.

    One conditional write, no read first: the write's condition is the token check (a heartbeat comes every few
    seconds from every running job, the most frequent call there is)."""
    token = _bearer(authorization)
    status = (
        job_store.renew_lease(job_id, int(time.time()) + settings().lease_seconds, _hash(token)) if job_id else None
    )
    if status is None:
        raise Unauthorized("The job token is not valid for this job, or the job has ended.")
    return status


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(TOKEN_PREFIX):
        raise Unauthorized("A job token is required (Authorization: Bearer <token>).")
    return token
