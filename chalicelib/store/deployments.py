"""Deployments and their jobs: created together, read by id, project and environment, moved by conditional writes."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from pynamodb.expressions.condition import Condition

from chalicelib.core.deployments import Deployment, EnvironmentAtStart, InlineEntry, Shown
from chalicelib.core.jobs import Job
from chalicelib.errors import Conflict
from chalicelib.store import batch, outbox
from chalicelib.store.builds import build_from_model
from chalicelib.store.delivery_models import DeploymentModel
from chalicelib.store.jobs import job_from_model, job_model
from chalicelib.store.models import BuildModel, JobModel, ProjectModel
from chalicelib.store.outbox import Owed
from chalicelib.store.projects import project_from_model
from chalicelib.store.transactions import atomically, claim, condition_held, is_claimed, rewrite_unchanged

INLINE_CLAIM_DAYS = 30  # an inline deployment's claim outlives every redelivery of the message that starts it


def deployment_from_model(model: DeploymentModel) -> Deployment:
    """The deployment a stored item holds."""
    return Deployment(
        account_id=int(model.account_id),
        project_id=int(model.project_id),
        deployment_id=int(model.deployment_id),
        environment_id=int(model.environment_id or 0),
        environment=environment_from_item(model.environment),
        build_id=int(model.build_id),
        job_ids=list(model.job_ids),
        status=model.status,
        created=model.created,
        build_job_id=model.build_job_id,
        variables=model.variables or {},
        started=model.started,
        finished=model.finished,
        updated=model.updated,
        revision=int(model.revision),
        project_slug=model.project_slug,
        inline=None if model.inline is None else InlineEntry(int(model.inline["entry"]), str(model.inline["provider"])),
    )


def add_deployment(
    deployment: Deployment, jobs: list[Job], agent_due: int | None = None, once: str | None = None
) -> None:
    """Store a new deployment and its jobs at once (agents' jobs: with when their deadline message is due).

    ``once``: a key claimed in the same step, so that a deployment started on a message's behalf is started once
    however often the message comes (a Conflict when it was)."""
    inline = deployment.inline
    model = DeploymentModel(
        deployment.project_id,
        deployment.deployment_id,
        account_id=deployment.account_id,
        project_slug=deployment.project_slug,
        environment_id=None if inline else deployment.environment_id,
        environment=environment_item(deployment.environment),
        inline=None if inline is None else {"entry": inline.entry, "provider": inline.provider},
        build_id=deployment.build_id,
        build_job_id=deployment.build_job_id,
        variables=deployment.variables or None,
        job_ids=deployment.job_ids,
        status=deployment.status,
        created=deployment.created,
        revision=1,
    )
    with atomically("The deployment exists already.") as transaction:
        transaction.save(model, condition=DeploymentModel.deployment_id.does_not_exist())
        for job in jobs:
            transaction.save(job_model(job, agent_due), condition=JobModel.job_id.does_not_exist())
        if once is not None:
            claim(transaction, once, expires=datetime.now(UTC) + timedelta(days=INLINE_CLAIM_DAYS))


def started_once(once: str) -> bool:
    """Whether a deployment claimed ``once`` when it was added (a read to skip the work; the write claims again)."""
    return is_claimed(once)


def get_deployment(project_id: int, deployment_id: int) -> Deployment | None:
    try:
        return deployment_from_model(DeploymentModel.get(project_id, deployment_id, consistent_read=True))
    except DeploymentModel.DoesNotExist:
        return None


def get_deployment_by_id(deployment_id: int) -> Deployment | None:
    """A deployment by its id alone (callers check the account)."""
    for model in DeploymentModel.by_id.query(deployment_id, limit=1):
        return deployment_from_model(model)
    return None


def with_parts(deployments: list[Deployment], again: bool = False, projects: bool = False) -> list[Shown]:
    """Each deployment with its build and jobs, in one BatchGetItem for the lot (one more per 100 items).

    ``again`` reads the deployments themselves once more, consistently, in the same call (they were found
    through an eventually consistent index); ``projects`` adds the projects of those that keep their slug.
    """
    keys: list[batch.Key] = []
    for deployment in deployments:
        keys.append((BuildModel, deployment.project_id, deployment.build_id))
        keys.extend((JobModel, job_id, None) for job_id in deployment.job_ids)
        if again:
            keys.append((DeploymentModel, deployment.project_id, deployment.deployment_id))
        if projects and deployment.project_slug:
            keys.append((ProjectModel, deployment.account_id, deployment.project_slug))
    found = batch.get_items(keys)
    builds = {(b.project_id, b.build_id): b for b in map(build_from_model, batch.of_model(found, BuildModel))}
    jobs = {job.job_id: job for job in map(job_from_model, batch.of_model(found, JobModel))}
    fresh = {d.deployment_id: d for d in map(deployment_from_model, batch.of_model(found, DeploymentModel))}
    by_slug = {(p.account_id, p.slug): p for p in map(project_from_model, batch.of_model(found, ProjectModel))}
    return [
        Shown(
            deployment=fresh.get(deployment.deployment_id, deployment),
            build=builds.get((deployment.project_id, deployment.build_id)),
            jobs=[jobs[job_id] for job_id in deployment.job_ids if job_id in jobs],
            project=by_slug.get((deployment.account_id, deployment.project_slug or "")),
        )
        for deployment in deployments
    ]


def list_project_deployments(project_id: int, before_deployment_id: int | None, limit: int) -> list[Deployment]:
    """A page of the project's deployments, newest first, older than ``before_deployment_id``."""
    condition = None if before_deployment_id is None else DeploymentModel.deployment_id < before_deployment_id
    models: Iterable[DeploymentModel] = DeploymentModel.query(
        project_id, condition, scan_index_forward=False, limit=limit
    )
    return [deployment_from_model(model) for model in models]


def list_environment_deployments(environment_id: int, limit: int) -> list[Deployment]:
    """The environment's newest deployments."""
    models = DeploymentModel.by_environment.query(environment_id, scan_index_forward=False, limit=limit)
    return [deployment_from_model(model) for model in models]


def delete_project_deployments(project_id: int) -> None:
    """Remove every deployment of a deleted project, with its jobs."""
    for model in DeploymentModel.query(project_id):
        for job_id in model.job_ids:
            JobModel(job_id).delete()
        model.delete()


def save_deployment_state(
    deployment: Deployment, status: str, started: datetime | None, finished: datetime | None, owed: Owed | None = None
) -> bool:
    """Write the status a deployment derives from its jobs, if nobody did since it was read; with the message
    ``owed`` (its notifications) recorded in the outbox in the same step."""
    actions: list[Any] = [
        DeploymentModel.status.set(status),
        DeploymentModel.updated.set(datetime.now(UTC)),
        DeploymentModel.revision.add(1),
        DeploymentModel.started.set(started) if started else DeploymentModel.started.remove(),
        DeploymentModel.finished.set(finished) if finished else DeploymentModel.finished.remove(),
    ]
    item, condition = DeploymentModel(deployment.project_id, deployment.deployment_id), DeploymentModel.revision
    if owed is None:
        return condition_held(lambda: item.update(actions=actions, condition=condition == deployment.revision))
    try:
        with atomically("The deployment changed meanwhile.") as transaction:
            transaction.update(item, actions=actions, condition=condition == deployment.revision)
            outbox.record(transaction, owed)
    except Conflict:
        return False
    return True


# A deployment keeps its environment as it was when it started (DeploymentModel.environment) in the store's own
# form: EnvironmentAtStart's field names, ISO 8601 times. Deployments stored before kept the API's summary of the
# environment ("deploymentEnvironmentId", AppVeyor's timestamps): read as they are; `conveyor migrate` rewrites them.


def environment_item(environment: EnvironmentAtStart) -> dict[str, Any]:
    return {
        "environment_id": environment.environment_id,
        "name": environment.name,
        "provider": environment.provider,
        "created": environment.created.isoformat(),
        "updated": None if environment.updated is None else environment.updated.isoformat(),
    }


def environment_from_item(item: dict[str, Any]) -> EnvironmentAtStart:
    if "deploymentEnvironmentId" in item:  # the API's summary
        item = {**item, "environment_id": item["deploymentEnvironmentId"]}
    updated = item.get("updated")
    return EnvironmentAtStart(
        environment_id=int(item["environment_id"]),
        name=str(item["name"]),
        provider=str(item["provider"]),
        created=datetime.fromisoformat(item["created"]),  # AppVeyor's seven fractional digits read as six
        updated=None if not updated else datetime.fromisoformat(updated),
    )


def rewrite_old_environments() -> int:
    """Deployments whose environment is still the API's summary of it: rewritten in the store's own form; how many.
    A Scan, for migrations only."""

    def rewrite(model: DeploymentModel) -> tuple[list[Any], Condition] | None:
        if "deploymentEnvironmentId" not in model.environment:
            return None
        environment = environment_item(environment_from_item(model.environment))
        return [DeploymentModel.environment.set(environment)], DeploymentModel.environment == model.environment

    return rewrite_unchanged(DeploymentModel.scan(), rewrite)
