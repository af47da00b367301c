"""Deployments: a successful build's artifacts delivered to an environment, moved forward by SQS."""

from __future__ import annotations

import secrets
import string
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment, EnvironmentAtStart, InlineEntry, Shown
from chalicelib.core.environments import Environment
from chalicelib.core.jobs import Job
from chalicelib.core.messages import AgentDeadline, RunDeploymentJob
from chalicelib.core.projects import Project
from chalicelib.core.status import Status
from chalicelib.deploy.providers import by_agents
from chalicelib.domain.execution import progress
from chalicelib.domain.projects.project_lookup import find_project, with_its_project
from chalicelib.domain.shared import outbox
from chalicelib.domain.team.access import Right, has_right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Conflict, Invalid, NotFound
from chalicelib.store import builds as build_store
from chalicelib.store import counters
from chalicelib.store import deployments as store
from chalicelib.store import environments as environment_store
from chalicelib.store import projects as project_store

DEPLOYMENT_NOT_FOUND = "Deployment not found or access denied."
ENVIRONMENT_NOT_FOUND = "Environment not found or access denied."
MAX_PAGE = 20  # the contract's default and maximum page of project deployments
MAX_AGENTS = 20
_JOB_ID_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class StartRequest:
    environment_name: str
    account_name: str
    project_slug: str
    build_version: str
    build_job_id: str | None = None
    environment_variables: dict[str, str] = field(default_factory=dict)


def start_deployment(caller: Caller, request: StartRequest) -> tuple[Deployment, list[Job], Build, Project]:
    """Check the environment, project and build, store the deployment queued, and queue its jobs."""
    environment = environment_named(caller.account_id, request.environment_name)
    if environment is None:
        raise NotFound(f"Environment '{request.environment_name}' not found.")
    target = Target.of(environment)  # the environment's settings are checked before anything is stored
    project = find_project(caller, request.account_name, request.project_slug, Right.VIEW)
    build = build_store.get_build_by_version(project.project_id, request.build_version)
    if build is None:
        raise NotFound(f"Build version '{request.build_version}' not found.")
    if build.status != Status.SUCCESS:
        raise Conflict(f"Build {build.version} is {build.status}: only a successful build can be deployed.")
    if request.build_job_id is not None and request.build_job_id not in build.job_ids:
        raise NotFound(f"Job '{request.build_job_id}' is not a job of build {build.version}.")
    deployment, jobs = queue_deployment(project, build, target, request.build_job_id, request.environment_variables)
    return deployment, jobs, build, project


@dataclass(frozen=True)
class Target:
    """Where a deployment goes: an environment as it is now (with its jobs' names), or a build's inline entry."""

    environment: EnvironmentAtStart
    job_names: list[str]
    agents_deadline: int | None = None  # an Agent environment's: seconds its agents have to take the jobs
    inline: InlineEntry | None = None

    @classmethod
    def of(cls, environment: Environment) -> Target:
        """The environment as a deployment's target; Invalid when its settings are not usable."""
        deadline = agents_timeout(environment) if by_agents(environment.provider) else None
        return cls(environment_at_start(environment), job_names(environment), deadline)


def queue_deployment(
    project: Project,
    build: Build,
    target: Target,
    build_job_id: str | None,
    variables: dict[str, str],
    once: str | None = None,
) -> tuple[Deployment, list[Job]]:
    """Store a deployment of the (successful) build queued, with its jobs, and queue them; with ``once``, a key
    claimed in the same step (Conflict: a deployment holding it was started already)."""
    now = datetime.now(UTC)
    deployment = Deployment(
        account_id=project.account_id,
        project_id=project.project_id,
        project_slug=project.slug,
        deployment_id=counters.next_value(counters.DEPLOYMENTS),
        environment_id=target.environment.environment_id,
        environment=target.environment,
        build_id=build.build_id,
        job_ids=[],
        status=Status.QUEUED,
        created=now,
        build_job_id=build_job_id,
        variables=variables,
        inline=target.inline,
    )
    jobs = [_job(deployment, build, name, now) for name in target.job_names]
    deployment = replace(deployment, job_ids=[job.job_id for job in jobs])
    deadline = target.agents_deadline
    if deadline is not None:
        store.add_deployment(deployment, jobs, agent_due=int(time.time()) + deadline, once=once)
        outbox.send([AgentDeadline(job_id) for job_id in deployment.job_ids], delay_seconds=deadline)
    else:
        store.add_deployment(deployment, jobs, once=once)
        outbox.send([RunDeploymentJob(job_id) for job_id in deployment.job_ids])
    return deployment, jobs


def stop_deployment(caller: Caller, deployment_id: int) -> None:
    """Queued jobs are cancelled at once; running ones are stopped by their runner. A finished one stays."""
    deployment, _ = find_deployment(caller, deployment_id)
    progress.cancel_deployment_jobs(deployment, "Stopped by a user.")


def find_deployment(caller: Caller, deployment_id: int, right: Right = Right.VIEW) -> tuple[Deployment, Project]:
    """A deployment of the caller's account by id, if the caller may exercise ``right`` on its project."""
    indexed, project = _indexed(caller, deployment_id, right)
    # the id index is eventually consistent: a stop right after a start must see the status as it is now
    return store.get_deployment(indexed.project_id, deployment_id) or indexed, project


def deployment_details(caller: Caller, deployment_id: int) -> tuple[Project, Shown]:
    """A deployment as it is now, with its project, build and jobs: two Queries and one BatchGetItem."""
    indexed, project = _indexed(caller, deployment_id, Right.VIEW)
    return project, store.with_parts([indexed], again=True)[0]


def project_deployments(
    caller: Caller, account_name: str, slug: str, records: int, start_deployment_id: int | None
) -> tuple[Project, list[Shown]]:
    """A page of the project's deployments, newest first, older than ``start_deployment_id``."""
    project = find_project(caller, account_name, slug)
    return project, store.with_parts(store.list_project_deployments(project.project_id, start_deployment_id, records))


def environment_deployments(caller: Caller, environment_id: int) -> tuple[Environment, list[Shown]]:
    """The environment's newest deployments, each with its project (those the caller may view)."""
    environment = environment_store.get_environment(caller.account_id, environment_id)
    if environment is None:
        raise NotFound(ENVIRONMENT_NOT_FOUND)
    page = store.with_parts(store.list_environment_deployments(environment_id, MAX_PAGE), projects=True)
    by_id: dict[int, Project | None] = {shown.project.project_id: shown.project for shown in page if shown.project}
    for shown in page:  # deployments stored before they kept their project's slug
        if shown.deployment.project_id not in by_id:
            by_id[shown.deployment.project_id] = project_store.get_project_by_id(
                caller.account_id, shown.deployment.project_id
            )
    return environment, [
        replace(shown, project=project)
        for shown in page
        if (project := by_id[shown.deployment.project_id]) is not None and has_right(caller, project, Right.VIEW)
    ]


def _indexed(caller: Caller, deployment_id: int, right: Right) -> tuple[Deployment, Project]:
    return with_its_project(caller, store.get_deployment_by_id(deployment_id), right, DEPLOYMENT_NOT_FOUND)


def environment_at_start(environment: Environment) -> EnvironmentAtStart:
    """The environment as the deployment keeps it (the environment may change or go)."""
    return EnvironmentAtStart(
        environment_id=environment.environment_id,
        name=environment.name,
        provider=environment.provider,
        created=environment.created,
        updated=environment.updated,
    )


def provider_setting(environment: Environment, name: str) -> str | None:
    """A plain (not secret) provider setting of the environment."""
    for setting in environment.settings.get("providerSettings", []):
        value = setting.get("value") or {}
        if setting.get("name") == name and not value.get("isEncrypted"):
            return str(value.get("value") or "")
    return None


def agents_expected(environment: Environment) -> int:
    """How many agents must take an Agent deployment (``agents_expected``, default 1; 0 turns the check off)."""
    return _integer_setting(environment, "agents_expected", 1, 0, MAX_AGENTS)


def agents_timeout(environment: Environment) -> int:
    """How long agents have to take an Agent deployment, in seconds (5 to 60, default 10)."""
    return _integer_setting(environment, "agents_timeout", 10, 5, 60)


def _integer_setting(environment: Environment, name: str, default: int, low: int, high: int) -> int:
    text = provider_setting(environment, name)
    if text is None or not text.strip():
        return default
    if not text.strip().isdecimal():  # isdigit() would let "²" through, which int() refuses
        raise Invalid(f"The environment's {name} setting must be a whole number.")
    return min(max(int(text), low), high)


def environment_named(account_id: int, name: str) -> Environment | None:
    """The account's environment of that name (without regard to case), or None."""
    for environment in environment_store.list_environments(account_id):
        if environment.name.lower() == name.strip().lower():
            return environment
    return None


def job_names(environment: Environment) -> list[str]:
    """The jobs a deployment to the environment runs: one, or one per expected agent (Invalid: bad settings)."""
    if not by_agents(environment.provider):
        return [environment.name]
    return [f"Agent {number}" for number in range(1, max(agents_expected(environment), 1) + 1)]


def _job(deployment: Deployment, build: Build, name: str, now: datetime) -> Job:
    return Job(
        job_id="".join(secrets.choice(_JOB_ID_ALPHABET) for _ in range(16)),
        build_id=build.build_id,
        project_id=deployment.project_id,
        account_id=deployment.account_id,
        number=1,
        name=name,
        spec={},
        allow_failure=False,
        status=Status.QUEUED,
        created=now,
        deployment_id=deployment.deployment_id,
    )
