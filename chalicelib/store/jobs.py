"""Jobs of builds and deployments: read by id, moved between statuses by conditional writes, leased while they run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pynamodb.exceptions import UpdateError
from pynamodb.expressions.update import Action

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Executor, Job, ReportQuota
from chalicelib.core.projects import Project
from chalicelib.core.status import Status
from chalicelib.store.batch import Key, get_items, of_model
from chalicelib.store.builds import build_from_model
from chalicelib.store.job_forms import artifacts_from_items, counts_from_item
from chalicelib.store.models import BuildModel, JobModel, ProjectModel
from chalicelib.store.projects import project_from_model
from chalicelib.store.transactions import is_condition_failure

LEASED = "running"  # the one partition of the lease index: jobs that hold a lease
# The wait index's partitions: queued jobs whose message must follow, by when it was last sent (agent jobs: by
# when their deadline message is due). The sweeper sends again what no one claimed in time.
WAITING = "queued"  # build jobs: the jobs queue
DELIVERING = "deploy"  # deployment jobs the service delivers: the deployments queue
AGENT_DUE = "agent"  # deployment jobs for agents: the deadline message, due when no agent took the job in time
BUILD_AGENT_PREFIX = "build-agent:"  # build jobs for build agents, one partition per account and image: no message
_PAGE_SIZE = 100


def job_from_model(model: JobModel) -> Job:
    return Job(
        job_id=model.job_id,
        build_id=int(model.build_id),
        project_id=int(model.project_id),
        account_id=int(model.account_id),
        number=int(model.number),
        name=model.name,
        spec=model.spec,
        allow_failure=bool(model.allow_failure),
        status=model.status,
        created=model.created,
        message=model.message,
        counts=counts_from_item(model.counts),
        artifacts=artifacts_from_items(model.artifacts),
        attempts=int(model.attempts or 0),
        lease_expires=None if model.lease_expires is None else int(model.lease_expires),
        deployment_id=None if model.deployment_id is None else int(model.deployment_id),
        agent=model.agent,
        executor=model.executor,
        run_on=model.run_on,
        external_id=model.external_id,
        started=model.started,
        finished=model.finished,
        updated=model.updated,
        reported=int(model.reports or 0),
        reported_outside=int(model.outside_reports or 0),
        project_slug=model.project_slug,
        token_hash=model.token_hash,
    )


def job_model(job: Job, agent_due: int | None = None, pull_request: bool = False) -> JobModel:
    """A new job's item: every job starts queued, and only transition() moves it on."""
    if job.status != Status.QUEUED:
        raise ValueError(f"job {job.job_id} would be created {job.status}: jobs are created queued")
    return JobModel(
        job.job_id,
        build_id=job.build_id,
        project_id=job.project_id,
        account_id=job.account_id,
        number=job.number,
        name=job.name,
        spec=job.spec,
        allow_failure=job.allow_failure,
        status=job.status,
        message=job.message,
        deployment_id=job.deployment_id,
        executor=job.executor,
        run_on=job.run_on,
        created=job.created,
        project_slug=job.project_slug,
        **_waiting(job, agent_due, pull_request),
    )


def _waiting(job: Job, agent_due: int | None, pull_request: bool) -> dict[str, Any]:
    """The wait-index attributes of a new job: its message is sent again until it is claimed (an agent job's
    deadline message, from when it is due: ``agent_due``, epoch seconds). A build agent's job waits in its
    image's partition, where agents look for work (a pull request's in one of its own)."""
    if job.deployment_id is None:
        return {"waiting": wait_partition(job, pull_request), "sent_at": int(time.time())}
    if agent_due is None:
        return {"waiting": DELIVERING, "sent_at": int(time.time())}
    return {"waiting": AGENT_DUE, "sent_at": agent_due}


def wait_partition(job: Job, pull_request: bool) -> str:
    """Where a queued build job waits: the jobs queue's partition, or its build agents' (account, image, and
    whether it is a pull request's: only agents that take pull requests look there)."""
    if job.executor == Executor.AGENT:
        return agent_partition(job.account_id, job.run_on or "", pull_request)
    return WAITING


def agent_partition(account_id: int, image: str, pull_request: bool) -> str:
    """The wait partition of an account's build jobs for agents of ``image`` (any case), of pull requests or not."""
    return f"{BUILD_AGENT_PREFIX}{account_id}:{'pr:' if pull_request else ''}{image.casefold()}"


def get_job(job_id: str) -> Job | None:
    if not job_id:  # DynamoDB refuses an empty key rather than finding nothing
        return None
    try:
        return job_from_model(JobModel.get(job_id, consistent_read=True))
    except JobModel.DoesNotExist:
        return None


def get_jobs(job_ids: list[str]) -> list[Job]:
    """Jobs by id, read consistently (a build's status is derived from them), in the order given."""
    found = {model.job_id: job_from_model(model) for model in JobModel.batch_get(job_ids, consistent_read=True)}
    return [found[job_id] for job_id in job_ids if job_id in found]


def get_job_build_and_project(
    job_id: str, account_id: int, project_id: int, build_id: int, slug: str | None
) -> tuple[Job | None, Build | None, Project | None]:
    """A job, the build and (with ``slug``) the project it names, in one consistent read; each None when not
    found. The caller checks they belong together: the keys are a runner's word until its job is checked."""
    keys: list[Key] = [(JobModel, job_id, None), (BuildModel, project_id, build_id)]
    if slug is not None:
        keys.append((ProjectModel, account_id, slug))
    found = get_items(keys)
    job, build = next(iter(of_model(found, JobModel)), None), next(iter(of_model(found, BuildModel)), None)
    project = next(iter(of_model(found, ProjectModel)), None)
    return (
        None if job is None else job_from_model(job),
        None if build is None else build_from_model(build),
        None if project is None else project_from_model(project),
    )


def expired_leases(now: int, limit: int = 100) -> list[Job]:
    """Running jobs whose runner stopped renewing its lease before ``now`` (epoch seconds)."""
    return [job_from_model(m) for m in JobModel.by_lease.query(LEASED, JobModel.lease_expires < now, limit=limit)]


def unclaimed_jobs(partition: str, sent_before: int, limit: int = 100) -> list[str]:
    """Jobs of a wait ``partition`` whose message was last sent (or due) before ``sent_before`` (epoch seconds) and
    that nobody claimed."""
    found = JobModel.by_wait.query(partition, JobModel.sent_at < sent_before, limit=limit)
    return [model.job_id for model in found]


def queued_in(partition: str, sent_before: int) -> Iterator[Job]:
    """Jobs of a wait ``partition`` due before ``sent_before`` (epoch seconds), oldest first, as the index has them
    (it lags the table a moment): read a page at a time, as far as the caller goes."""
    for model in JobModel.by_wait.query(partition, JobModel.sent_at < sent_before, page_size=_PAGE_SIZE):
        yield job_from_model(model)


def hold_back(job_id: str, message: str, until: int) -> None:
    """A build agent's queued job that cannot start yet says why, and is out of its agents' sight until ``until``
    (epoch seconds) or until it is woken. Nothing is written when the job is no longer queued."""
    _set_due(job_id, [JobModel.message.set(message), JobModel.sent_at.set(until)])


def wake(job_id: str) -> None:
    """A job held back is due now: its agents see it again. Nothing is written when it is no longer queued."""
    _set_due(job_id, [JobModel.sent_at.set(int(time.time()))])


def _set_due(job_id: str, actions: list[Action]) -> None:
    try:
        JobModel(job_id).update(actions=actions, condition=(JobModel.status == "queued") & JobModel.waiting.exists())
    except UpdateError as error:
        if not is_condition_failure(error):
            raise


def note_resent(job_id: str) -> bool:
    """The job's message was sent again now; False (its wait marker dropped) when the job is no longer queued."""
    try:
        JobModel(job_id).update(actions=[JobModel.sent_at.set(int(time.time()))], condition=JobModel.status == "queued")
    except UpdateError as error:
        if not is_condition_failure(error):
            raise
        try:  # conditional: the job may be gone meanwhile, and an update would make a stray item of its id
            JobModel(job_id).update(
                actions=[JobModel.waiting.remove(), JobModel.sent_at.remove()], condition=JobModel.job_id.exists()
            )
        except UpdateError as gone:
            if not is_condition_failure(gone):
                raise
        return False
    return True


def note_waiting(job_id: str, message: str) -> None:
    """A queued job that cannot start yet says why; its message counts as sent now (the sweeper sends it again
    later, should nothing else start it). Nothing is written when the job is no longer queued."""
    try:
        JobModel(job_id).update(
            actions=[JobModel.message.set(message), JobModel.sent_at.set(int(time.time()))],
            condition=JobModel.status == "queued",
        )
    except UpdateError as error:
        if not is_condition_failure(error):
            raise


def take_clone_credentials(job_id: str) -> bool:
    """Note that the job's runner took its clone credentials; False (nothing written) when it had them already."""
    try:
        JobModel(job_id).update(
            actions=[JobModel.credentials_taken.set(True)],
            condition=JobModel.job_id.exists() & JobModel.credentials_taken.does_not_exist(),
        )
    except UpdateError as error:
        if is_condition_failure(error):
            return False
        raise
    return True


def take_report_quota(job_id: str, taken: ReportQuota, limit: ReportQuota, outside: bool = False) -> str | None:
    """Count ``taken`` (reports, and the bytes they store) against the job's ``limit``: None when counted, else which
    cap they would pass ("count" or "bytes"), nothing counted. ``outside``: tests a key sent from outside the build,
    counted apart, so they never use up the build's room. A job stored before the byte quota has used 0 bytes."""
    if taken.count > limit.count:
        return "count"
    if taken.size > limit.size:
        return "bytes"
    counter = JobModel.outside_reports if outside else JobModel.reports
    size = JobModel.outside_report_bytes if outside else JobModel.report_bytes
    room = (counter.does_not_exist() | (counter <= limit.count - taken.count)) & (
        size.does_not_exist() | (size <= limit.size - taken.size)
    )
    try:
        JobModel(job_id).update(actions=[counter.add(taken.count), size.add(taken.size)], condition=room)
    except UpdateError as error:
        if is_condition_failure(error):
            found = JobModel.get(job_id, consistent_read=True)
            used = (found.outside_reports if outside else found.reports) or 0
            return "count" if used + taken.count > limit.count else "bytes"
        raise
    return None


def take_cache_quota(job_id: str, size: int, limit: int) -> bool:
    """Count a cache entry upload of ``size`` bytes against the job's ``limit`` for this attempt; False (nothing
    counted) when it would pass it."""
    if size > limit:
        return False
    room = JobModel.cache_bytes.does_not_exist() | (JobModel.cache_bytes <= limit - size)
    try:
        JobModel(job_id).update(actions=[JobModel.cache_bytes.add(size)], condition=room)
    except UpdateError as error:
        if is_condition_failure(error):
            return False
        raise
    return True


def assign_route(job: Job, executor: str, run_on: str | None, message: str | None, pull_request: bool) -> bool:
    """Place a queued job on its executor (a job queued before routing, or run again after a refusal): it waits in
    that executor's partition; False (nothing written) when it is no longer queued."""
    placed = replace(job, executor=executor, run_on=run_on)
    actions: list[Action] = [
        JobModel.executor.set(executor),
        JobModel.run_on.set(run_on) if run_on is not None else JobModel.run_on.remove(),
        JobModel.waiting.set(wait_partition(placed, pull_request)),
        JobModel.sent_at.set(int(time.time())),
    ]
    if message is not None:
        actions.append(JobModel.message.set(message))
    try:
        JobModel(job.job_id).update(actions=actions, condition=JobModel.status == "queued")
    except UpdateError as error:
        if is_condition_failure(error):
            return False
        raise
    return True


def note_external_id(job_id: str, external_id: str) -> None:
    """The executor's id of the job's run (a CodeBuild build id), to stop it and ask after it."""
    JobModel(job_id).update(actions=[JobModel.external_id.set(external_id)], condition=JobModel.job_id.exists())


def note_build_agent(job_id: str, agent: str) -> None:
    """The build agent that took the job (its name stays the matrix's)."""
    JobModel(job_id).update(actions=[JobModel.agent.set(agent)])


def name_agent(job_id: str, agent: str) -> None:
    """The deployment agent that took the job: the job is named after it, as AppVeyor names agent jobs."""
    JobModel(job_id).update(actions=[JobModel.agent.set(agent), JobModel.name.set(agent)])


def next_log_chunk(job_id: str) -> int:
    """The index of the next log chunk an agent sends (an atomic counter: reports never overwrite each other)."""
    job = JobModel(job_id)
    job.update(actions=[JobModel.log_chunks.add(1)])
    return int(job.log_chunks) - 1


def log_chunk_count(job_id: str) -> int:
    """How many log chunks an agent has sent for the job."""
    try:
        return int(JobModel.get(job_id, consistent_read=True).log_chunks or 0)
    except JobModel.DoesNotExist:
        return 0


def renew_lease(job_id: str, lease_expires: int, token_hash: str | None = None) -> str | None:
    """Extend a running job's lease; returns the job's status now (None when it is no longer leased).

    With ``token_hash``, only while the job's token is still that one.
    """
    job = JobModel(job_id)
    condition = JobModel.leased.exists() & JobModel.status.is_in("running", "cancelling")
    if token_hash is not None:
        condition = condition & (JobModel.token_hash == token_hash)
    try:
        job.update(actions=[JobModel.lease_expires.set(lease_expires)], condition=condition)
    except UpdateError as error:
        if is_condition_failure(error):
            return None
        raise
    return str(job.status)
