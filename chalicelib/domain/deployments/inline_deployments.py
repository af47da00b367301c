"""Inline deployments: the ``deploy:`` entries of a build's appveyor.yml, started as the build's deployments.

AppVeyor runs them in each job, as its last phase. Conveyor starts them once the whole build has succeeded, from
the notifications queue's message that announces the finished build (recorded with the write that finishes it,
sent until handled): for each successful job, each entry whose ``on:`` conditions hold for that job
(domain/deployments/deploy_conditions.py) becomes one deployment of that job's artifacts, run as any deployment is (a
matrix of two jobs and an entry with no ``on:`` deploys twice, once with each job's artifacts, as on AppVeyor). Each
deployment claims a key named after the build, the job's run and the entry in the write that stores it, so a
message handled twice starts it once, and a re-run job deploys again.

They show as deployments of the project (``environment`` ``{deploymentEnvironmentId: 0, name: "FTP (inline)"}``),
and the build's messages name each one started, and each entry that did not run and why: nothing written in
``deploy:`` is left out in silence. ``provider: Environment`` starts a deployment to the account's environment of
that ``name``, the entry's other settings its variables.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.configuration import Configuration
from chalicelib.core.deployments import EnvironmentAtStart, InlineEntry
from chalicelib.core.environments import Environment
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.core.status import Status
from chalicelib.deploy import providers
from chalicelib.deploy.destinations import DESTINATION_SETTINGS
from chalicelib.domain.configuration.job_overrides import job_configuration
from chalicelib.domain.deployments.delivery_inputs import substitute
from chalicelib.domain.deployments.deploy_conditions import JobVariables, conditions_hold, job_variables
from chalicelib.domain.deployments.deployments import Target, environment_named, queue_deployment
from chalicelib.domain.deployments.environments import INLINE_PROJECTS, inline_deployment_projects
from chalicelib.domain.forges.commit_statuses import MAX_BUILD_MESSAGES
from chalicelib.domain.projects.request_variables import why_untrusted, withholds_secrets
from chalicelib.errors import Conflict, Invalid
from chalicelib.shapes.time import timestamp
from chalicelib.store import builds as build_store
from chalicelib.store import deployments as deployment_store
from chalicelib.store import jobs as job_store

log = logging.getLogger(__name__)
ENVIRONMENT = "Environment"  # the inline provider that starts a deployment to an environment of the account
MAX_INLINE_DEPLOYMENTS = 10  # per build (jobs times entries): each may hold a deployment function for 15 minutes


def start_inline_deployments(project: Project, build: Build, revision: int) -> int:
    """Start the deployments of the build's ``deploy:`` entries, if it finished successfully at ``revision``;
    how many this call started (a redelivered message finds them started and starts none)."""
    if build.revision != revision or not Status(build.status).finished:
        return 0  # moved on (a re-run): a newer message speaks for it
    started, planned = 0, 0
    unsupported: set[tuple[int, str]] = set()
    for job in job_store.get_jobs(build.job_ids):
        configuration = job_configuration(build.configuration, job.spec)  # with the for: items that select it
        entries = list(_entries(configuration))
        if not entries or configuration.get("deployMode") == "none":
            continue
        reason = _not_run(build, configuration, len(entries))
        if reason is not None:
            _say(build, "warning", reason)  # said once however many jobs it applies to
            continue
        if job.status != Status.SUCCESS:  # a job allowed to fail that did
            continue
        variables = job_variables(project, build, job, configuration)
        for number, entry in entries:
            if not conditions_hold(entry, build.branch, variables):
                continue
            provider = str(entry.get("provider") or "")
            if provider != ENVIRONMENT and provider not in providers.inline_names():
                unsupported.add((number, provider))
                continue
            planned += 1
            if planned > MAX_INLINE_DEPLOYMENTS:
                _say(build, "warning", f"Only the first {MAX_INLINE_DEPLOYMENTS} inline deployments of a build run.")
                break
            started += _start(project, build, job, number, entry, variables)
    for number, provider in sorted(unsupported):
        _say(build, "warning", _unsupported(number, provider))
    return started


def deploys_in(project: Project, build: Build, job: Job) -> int:
    """How many ``deploy:`` entries would deploy from this job if the build succeeds (its scripts are running)."""
    configuration = job_configuration(build.configuration, job.spec)
    if configuration.get("deployMode") != "providers" or withholds_secrets(build):
        return 0
    variables = job_variables(project, build, job, configuration)
    runnable = {*providers.inline_names(), ENVIRONMENT}
    return sum(
        entry.get("provider") in runnable and conditions_hold(entry, build.branch, variables)
        for _, entry in _entries(configuration)
    )


def job_entry(build: Build, job: Job, number: int) -> dict[str, Any] | None:
    """The job's ``deploy:`` entry of that index, as its configuration holds it, or None."""
    return dict(_entries(job_configuration(build.configuration, job.spec))).get(number)


def _entries(configuration: Configuration) -> Iterator[tuple[int, dict[str, Any]]]:
    """The configuration's deployment entries, with their index (how an inline deployment names its entry)."""
    for index, entry in enumerate(configuration.get("deployments") or []):
        if isinstance(entry, dict):
            yield index, entry


def _not_run(build: Build, configuration: Configuration, count: int) -> str | None:
    """Why none of a job's ``count`` entries run, or None."""
    entries = "its deploy: entry" if count == 1 else f"its {count} deploy: entries"
    if configuration.get("deployMode") == "script":
        return f"deploy_script replaces the deploy: providers (as on AppVeyor): {entries} did not run."
    if build.pull_request is not None:
        return f"Inline deployments do not run for pull request builds (as on AppVeyor): {entries} did not run."
    if (reason := why_untrusted(build)) is not None:  # its variables shape what would go out with the secrets
        return f"Inline deployments do not run for this build ({reason}): {entries} did not run."
    if build.status != Status.SUCCESS:
        return f"Inline deployments run once the build succeeds: the build is {build.status}, {entries} did not run."
    return None


def _start(
    project: Project, build: Build, job: Job, number: int, entry: dict[str, Any], variables: JobVariables
) -> int:
    """Start one entry's deployment of one job's artifacts, unless it was; 1 if this call started it."""
    finished = job.finished.isoformat() if job.finished else ""
    once = f"inline-deployment#{build.build_id}#{job.job_id}#{finished}#{number}"  # once per run of the job
    if deployment_store.started_once(once):
        return 0
    provider = str(entry["provider"])
    of_job = f" of job {job.name}" if job.name and len(build.job_ids) > 1 else ""
    what = f"Inline deployment {number + 1} ({provider}){of_job}"
    if provider == ENVIRONMENT:
        target, deployment_variables, problem = _environment_target(project, entry, variables)
    else:
        target, deployment_variables, problem = _inline_target(number, provider, job), {}, None
    if target is None:
        _say(build, "warning", f"{what} did not run: {problem}")
        return 0
    try:
        deployment, _ = queue_deployment(project, build, target, job.job_id, deployment_variables, once=once)
    except Conflict:  # another delivery of the message started it meanwhile
        return 0
    _say(build, "information", f"{what} started: deployment {deployment.deployment_id}.")
    if problem is not None:
        _say(build, "warning", f"{what}: {problem}")
    return 1


def _inline_target(number: int, provider: str, job: Job) -> Target:
    """An entry delivered with the service's own provider: no environment, the entry's settings read when it runs."""
    name = f"{provider} (inline)"
    at_start = EnvironmentAtStart(environment_id=0, name=name, provider=provider, created=datetime.now(UTC))
    return Target(at_start, [job.name or name], inline=InlineEntry(number, provider))


def _environment_target(
    project: Project, entry: dict[str, Any], variables: JobVariables
) -> tuple[Target | None, dict[str, str], str | None]:
    """An Environment entry's target (None: why not), the variables it passes, and what it leaves out."""
    values: dict[str, str] = {}
    secure: list[str] = []
    name = ""
    for setting in entry.get("providerSettings") or []:
        if not isinstance(setting, dict) or not isinstance(setting.get("name"), str):
            continue
        value = setting.get("value") or {}
        if value.get("isEncrypted"):
            secure.append(setting["name"])
        elif setting["name"] == "name":
            name = str(value.get("value") or "").strip()
        else:
            values[setting["name"]] = substitute(str(value.get("value") or ""), variables.values)
    if not name:
        return None, {}, "the Environment provider needs the name of an environment of the account (name:)."
    environment = environment_named(project.account_id, name)
    if environment is None:
        return None, {}, f"the account has no environment named '{name}'."
    if project.project_id not in inline_deployment_projects(environment):
        return None, {}, _not_listed(project, environment)
    try:
        target = Target.of(environment)
    except Invalid as error:
        return None, {}, f"the environment '{environment.name}' cannot be deployed to: {error.message}"
    values, kept_back = _passable(environment, values, variables)
    problems = []
    if secure:  # a deployment keeps its variables in plain text, which a secret never is
        problems.append(f"secure settings are not passed to an environment, so these were not: {', '.join(secure)}.")
    if kept_back:
        problems.append(
            f"these settings were not passed, as they would replace the environment's own variables, the build's, or "
            f"a part of where it delivers: {', '.join(kept_back)}."
        )
    return target, values, " ".join(problems) or None


def _passable(
    environment: Environment, values: dict[str, str], variables: JobVariables
) -> tuple[dict[str, str], list[str]]:
    """The entry's values an environment's deployment may take as variables, and the names kept back: none may
    replace a variable it has already (the environment's, the build's APPVEYOR_* and others), nor fill a $(NAME)
    in where the environment delivers (its url, server, host...), which would send its secrets elsewhere. Whoever
    pushes the appveyor.yml chooses these values; the environment's owner chose its destination."""
    settings = environment.settings or {}
    taken = {name.lower() for name in variables.values}
    for variable in settings.get("environmentVariables") or []:
        if isinstance(variable, dict) and isinstance(variable.get("name"), str):
            taken.add(variable["name"].lower())
    for setting in settings.get("providerSettings") or []:
        if isinstance(setting, dict) and str(setting.get("name", "")).lower() in DESTINATION_SETTINGS:
            written = str((setting.get("value") or {}).get("value") or "")
            taken.update(found.lower() for found in re.findall(r"\$\(([^)]*)\)", written))
    passed = {name: value for name, value in values.items() if name.lower() not in taken}
    return passed, sorted(set(values) - set(passed))


def _not_listed(project: Project, environment: Environment) -> str:
    """Why an environment that does not list the project takes none of its appveyor.yml's deployments."""
    return (
        f"the environment '{environment.name}' does not list this project (projectId {project.project_id}) among "
        f"those whose appveyor.yml may deploy to it: whoever may update the environment adds it to the environment's "
        f"settings.{INLINE_PROJECTS} (none are listed by default)."
    )


def _unsupported(number: int, provider: str) -> str:
    supported = ", ".join([*providers.inline_names(), ENVIRONMENT])
    missing = f"Conveyor has no {provider} provider" if provider else "it names no provider"
    return (
        f"Inline deployment {number + 1} ({provider}) did not run: {missing}. Inline deployments can use {supported}."
    )


def _say(build: Build, category: str, text: str) -> None:
    """A message on the build for its users (each said once)."""
    message = {"category": category, "message": text, "created": timestamp(datetime.now(UTC))}
    if not build_store.add_message(build.project_id, build.build_id, message, MAX_BUILD_MESSAGES):
        log.info("build %s: message not added (said already, or too many): %s", build.build_id, text)
