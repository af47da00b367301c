"""A runner's one credential: a token per claimed job, and the lease it renews.

A token is minted when the job is dispatched (``mint_token``), stored only as its SHA-256 on the job, and works
while the job runs: ending the job (however it ends, a lost lease included) removes it. A token for one job names
no other: every operation finds the job by the id in the path and compares the token with that job's.

A build job's token also names, after its secret, where the job's build and project are kept (their keys, which
its runner is told anyway): an operation that needs them reads them with the job, in one read instead of two.
The hash covers them, so a runner that changes them has no token; and what was read is used only once the job
is checked and the keys found to be the job's own.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.core.status import Status
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store

TOKEN_PREFIX = "cvyj_"
_MAX_ID = 2**53  # ids are counters: far below what JSON and DynamoDB's numbers hold
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")  # slugify's form (domain/projects/projects.py), and then some


@dataclass(frozen=True)
class NewToken:
    token: str  # handed to the runner in its ticket, never stored
    token_hash: str  # stored on the job


@dataclass(frozen=True)
class JobKeys:
    """Where a build job's build and project are kept: what its token names besides the job."""

    account_id: int
    project_id: int
    build_id: int
    slug: str


@dataclass(frozen=True)
class RunnerJob:
    """The job a token was checked for, with its build and project when they were read with it (else None)."""

    job: Job
    build: Build | None = None
    project: Project | None = None


def mint_token(keys: JobKeys | None = None) -> NewToken:
    """A fresh job token: 256 random bits, and the ``keys`` of a build job's build and project."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    if keys is not None:
        named = [keys.account_id, keys.project_id, keys.build_id, keys.slug]
        token += "." + base64.urlsafe_b64encode(json.dumps(named).encode()).decode().rstrip("=")
    return NewToken(token, _hash(token))


def keys_of(job: Job) -> JobKeys | None:
    """The keys a build job's token names (None for a deployment's job, or a job stored without its project's)."""
    if job.deployment_id is not None or job.project_slug is None:
        return None
    return JobKeys(job.account_id, job.project_id, job.build_id, job.project_slug)


def _named_keys(token: str) -> JobKeys | None:
    """The keys a token names, unchecked (None when it names none, or not in the form minted)."""
    _, dot, encoded = token.partition(".")
    if not dot or len(encoded) > 1024:
        return None
    try:
        named = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(named, list) or len(named) != 4 or not isinstance(named[3], str):
        return None
    if not all(isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_ID for value in named[:3]):
        return None
    if not _SLUG.fullmatch(named[3]):  # a key DynamoDB would refuse (a 500, not a 401) is no key of ours
        return None
    return JobKeys(named[0], named[1], named[2], named[3])


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def runner_job(job_id: str, authorization: str | None) -> Job:
    """The job a request's token was minted for; Unauthorized for any other job, or once the job has ended."""
    token = _bearer(authorization)
    return _checked(job_store.get_job(job_id), token)


def runner_job_with_build(job_id: str, authorization: str | None, project: bool) -> RunnerJob:
    """``runner_job``, with the job's build (and ``project``) read at once when the token names where they are:
    a consistent read of all of them, used only once the job is checked and found to be theirs."""
    token = _bearer(authorization)
    keys = _named_keys(token)
    if keys is None or not job_id:
        return RunnerJob(runner_job(job_id, authorization))
    slug = keys.slug if project else None
    job, build, found = job_store.get_job_build_and_project(
        job_id, keys.account_id, keys.project_id, keys.build_id, slug
    )
    checked = _checked(job, token)
    if keys != keys_of(checked):  # never for a token minted here: the hash covers the keys
        return RunnerJob(checked)
    if found is not None and found.project_id != checked.project_id:  # deleted, and another made of its name
        found = None
    return RunnerJob(checked, build, found)


def build_and_project(job: Job, read: tuple[Build | None, Project | None] = (None, None)) -> tuple[Build, Project]:
    """The job's build and project: ``read`` with the job when its token named them (no read here), else one read
    for a job that names its project's key (jobs stored before: two)."""
    build, project = read
    if build is not None and project is not None:
        return build, project
    if job.project_slug is not None:
        found = build_store.get_build_and_project(job.account_id, job.project_id, job.build_id, job.project_slug)
    else:
        build = build_store.get_build(job.project_id, job.build_id)
        project = project_store.get_project_by_id(job.account_id, job.project_id)
        found = (build, project) if build is not None and project is not None else None
    if found is None:
        raise NotFound("The job's build no longer exists.")
    return found


def _checked(job: Job | None, token: str) -> Job:
    """``job`` when ``token`` is its running attempt's; Unauthorized otherwise."""
    stored = job.token_hash if job is not None else None
    if job is None or stored is None or not hmac.compare_digest(stored, _hash(token)):
        raise Unauthorized("The job token is not valid for this job.")
    # a lease that ran out is lost once the sweeper ends the job (which removes the token); until then a late
    # heartbeat renews it, so a slow network costs no job
    if job.status not in (Status.RUNNING, Status.CANCELLING):
        raise Unauthorized("The job has ended: its token no longer works.")
    return job


def heartbeat(job_id: str, authorization: str | None) -> dict[str, str]:
    """Extend the lease, while the token is the job's and the job runs; its status says go on ("running") or stop
    ("cancelling", with the cancel's ``message``: who cancelled it, or why).

    One conditional write, no read first: the write's condition is the token check (a heartbeat comes every few
    seconds from every running job, the most frequent call there is)."""
    token = _bearer(authorization)
    status = (
        job_store.renew_lease(job_id, int(time.time()) + settings().lease_seconds, _hash(token)) if job_id else None
    )
    if status is None:
        raise Unauthorized("The job token is not valid for this job, or the job has ended.")
    if status != "cancelling":
        return {"status": status}
    job = job_store.get_job(job_id)  # once per cancel: the runner stops at this answer
    return {"status": status, "message": (job.message if job is not None else None) or "The job was cancelled."}


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(TOKEN_PREFIX):
        raise Unauthorized("A job token is required (Authorization: Bearer <token>).")
    return token
