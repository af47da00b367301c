"""Which jobs ``conveyor exec`` runs, and each one's spec: appveyor.yml read and expanded by the domain's own
functions, as the service reads it for a build of the branch started by hand (``merge_repository_file`` over a
new project's settings, ``matrix_jobs``, the ``for:`` items' ``job_configuration``).

As for a build started through the API, the commit filters (``branches``, ``skip_commits``, ``for:`` items' job
filters) start or skip nothing: a filter that would skip a push of this branch is said, and the jobs run. Secure
values cannot be decrypted outside the service (only the project's own key opens them): each ``secure:`` variable
is unset, saying so once, unless ``-e NAME=VALUE`` gives it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.configuration import Configuration
from chalicelib.core.jobs import Executor, Job
from chalicelib.core.os_types import is_windows
from chalicelib.core.projects import Project
from chalicelib.domain.builds.job_environment import appveyor_variables
from chalicelib.domain.configuration import filters, unhonoured
from chalicelib.domain.configuration.job_overrides import (
    fetch_depth,
    job_configuration,
    job_warnings,
    runner_settings,
    spec_fields,
)
from chalicelib.domain.configuration.matrix import build_version, matrix_jobs
from chalicelib.domain.configuration.yamlconfig import DEFAULT_VERSION_FORMAT, default_configuration
from chalicelib.domain.configuration.yamlconfig import merge_repository_file as read_for_branch
from chalicelib.errors import Invalid
from chalicelib.executors import images, kinds
from chalicelib.protocol.job_spec import JobSpec

Json = dict[str, Any]
BUILD_NUMBER = 1  # every exec is a first build: APPVEYOR_BUILD_NUMBER, and {build} in the version
TIMEOUT_SECONDS = 3600  # AppVeyor's 60 minutes


@dataclass(frozen=True)
class Checkout:
    """What the build's variables say of the checkout: its name, branch and the commit built."""

    name: str  # the folder's name: the project's name, and its slug
    branch: str
    ref: str
    commit: Json  # as a build keeps it: commitId, message, messageExtended, author..., committed
    repository: str = ""  # as a git project names it: its remote's URL (the folder's name when it has none)


@dataclass(frozen=True)
class PlannedJob:
    """One job of the matrix, and whether it runs here."""

    number: int
    name: str  # as the build shows it ("" for a build of one job)
    image: str | None
    allow_failure: bool
    job: Job  # the job as the service would queue it, for the domain's functions
    skipped: str | None = None  # why it does not run here (an image exec does not provide, Windows without Wine)
    refused: str | None = None  # why it fails at once, as on the service (services:, stack:, hosts:)

    @property
    def title(self) -> str:
        """Its name, or ``job N`` for a build of one job."""
        return self.name or f"job {self.number}"


@dataclass
class Plan:
    """A build's configuration for the branch, its jobs, and what it says once before they run."""

    configuration: Configuration
    version: str
    jobs: list[PlannedJob]
    notes: list[str] = field(default_factory=list)


def plan(text: str, checkout: Checkout, given: dict[str, str], cache: bool = False) -> Plan:
    """The jobs appveyor.yml ``text`` makes for the checkout's branch; Invalid, saying why, for a file the service
    would refuse. ``given``: the ``-e`` variables (a secure variable they set is not said to be unset)."""
    configuration, version_format = read_for_branch(
        default_configuration(), DEFAULT_VERSION_FORMAT, text, checkout.branch
    )
    specs = matrix_jobs(configuration)
    if not specs:
        raise Invalid("The build matrix is empty: every job is excluded.")
    now = datetime.now(UTC)
    jobs = []
    for spec in specs:
        fields = {"image": spec.image, "configuration": spec.configuration, "platform": spec.platform}
        job = Job(
            job_id=f"exec{spec.number}", build_id=0, project_id=0, account_id=0, number=spec.number, name=spec.name,
            spec={**fields, "variables": list(spec.variables), **spec_fields(configuration, spec)},
            allow_failure=spec.allow_failure, status="running", created=now, executor=Executor.RUNNER,
        )  # fmt: skip
        jobs.append(
            PlannedJob(spec.number, spec.name, spec.image, spec.allow_failure, job, skipped=_skipped(spec.image))
        )
    # every job exec runs is in Conveyor's Ubuntu image, which gives stack: and services:
    planned_jobs = [planned.job for planned in jobs]
    refused = unhonoured.refusals(configuration, planned_jobs, {}, lambda job: None, _provides_setup)
    jobs = [_with_refusal(planned, refused.get(planned.job.job_id)) for planned in jobs]
    version = build_version(version_format, BUILD_NUMBER, checkout.branch)
    notes = _notes(configuration, jobs, checkout, cache)
    running = [planned for planned in jobs if planned.skipped is None]
    unset = {name for planned in running for name in _secure_names(_named(configuration, planned.job))} - set(given)
    notes += [
        f"Secure variable {name} is not set: secure values are decrypted by the service only. Give it with "
        f"-e {name}=VALUE to set it here."
        for name in sorted(unset)
    ]
    return Plan(configuration, version, jobs, notes)


def _named(configuration: Configuration, job: Job) -> list[Json]:
    """The job's named variables: appveyor.yml's environment (its for: items applied), then its matrix row's."""
    return [*job_configuration(configuration, job.spec).get("environmentVariables", []), *job.spec["variables"]]


def _secure_names(named: list[Json]) -> set[str]:
    return {str(v["name"]) for v in named if v.get("name") and (v.get("value") or {}).get("isEncrypted")}


def slug(name: str) -> str:
    """A project's slug from its name, as domain/projects/projects.slugify makes it (that module loads the store, and
    boto3 with it: half a second of every exec; tests/unit/local/exec/test_plan.py holds the two to one rule)."""
    made = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return made[:60].strip("-") or "project"


def _provides_setup(job: Job) -> bool:
    """Whether the job's machine provides what appveyor.yml's refused settings ask (exec runs the service's runner:
    it does not)."""
    return kinds.of(job.executor).provides_setup


def _with_refusal(planned: PlannedJob, refusal: str | None) -> PlannedJob:
    return planned if refusal is None else replace(planned, refused=refusal)


def _skipped(image: str | None) -> str | None:
    """Why a job of ``image`` does not run here: exec runs what the local executor runs in Conveyor's local image (no
    image, ``Ubuntu``, ``Ubuntu1604`` ... ``Ubuntu2204``), and Windows images' jobs under Wine where it is installed
    (local/exec/wine.py), and no other."""
    name = (image or "").strip()
    if is_windows(name):
        from chalicelib.local.exec import wine

        why = wine.missing()
        return None if why is None else f"skipped: '{name}' is a Windows image: {why}."
    if not name or any(name.casefold() == known.casefold() for known in images.UBUNTU_IMAGES):
        return None
    return (
        f"skipped: conveyor exec does not provide the image '{name}' (it runs no image, Ubuntu and Ubuntu1604 ... "
        "Ubuntu2204 in Conveyor's local image); the service runs it on a build agent or AWS CodeBuild."
    )


def _notes(configuration: Configuration, jobs: list[PlannedJob], checkout: Checkout, cache: bool) -> list[str]:
    """What the build says once: settings exec does not honour, and filters that would skip a push."""
    notes = unhonoured.warnings(configuration, [planned.job for planned in jobs], _provides_setup)
    pushed = filters.PushedCommit(branch=checkout.branch, title=str(checkout.commit.get("message") or ""))
    reason = filters.skip_reason(configuration, pushed)
    if reason:
        notes.append(f"{reason} (a push would start no build; conveyor exec runs it as a build started by hand.)")
    if configuration.get("notifications"):
        notes.append("notifications: not sent by conveyor exec (the service sends them when a build ends).")
    if configuration.get("deployments") and configuration.get("deployMode") not in ("script", "none"):
        notes.append(
            "deploy: its entries are not delivered by conveyor exec (the service delivers them once a build succeeds)."
        )
    if configuration.get("cacheEntries") and not cache:
        notes.append("cache: off under conveyor exec (--cache keeps it in .conveyor/exec/cache/ of this checkout).")
    if any(job_configuration(configuration, planned.job.spec).get("cloneScripts") for planned in jobs):
        notes.append(
            "clone_script: not run by conveyor exec: each job builds the working tree, fetched as a build fetches "
            "its commit."
        )
    if configuration.get("idToken"):
        notes.append("id_token: conveyor exec issues no ID tokens (only the service can sign them).")
    return notes


def job_spec(
    planned: PlannedJob,
    built: Plan,
    checkout: Checkout,
    source_url: str,
    given: dict[str, str],
    cache: bool = False,
) -> JobSpec:
    """The spec the job's runner is handed, as the service's (domain/job_protocol/job_specs.job_spec) for a job
    of this configuration; ``given``: the ``-e`` variables, which set or override the job's."""
    configuration = job_configuration(built.configuration, planned.job.spec)
    project = Project(
        account_id=0, account_name="local", project_id=0, slug=slug(checkout.name), name=checkout.name,
        repository_type="git", repository_scm="git", repository_name=checkout.repository or checkout.name,
        webhook_id="", version_format=DEFAULT_VERSION_FORMAT, configuration=built.configuration,
        created=planned.job.created,
    )  # fmt: skip
    build = Build(
        account_id=0, project_id=0, build_id=0, build_number=BUILD_NUMBER, version=built.version,
        branch=checkout.branch, ref=checkout.ref, commit=checkout.commit, configuration=built.configuration,
        job_ids=[planned.job.job_id], status="running", created=planned.job.created, flags={"forced": True},
    )  # fmt: skip
    variables = appveyor_variables(project, build, planned.job, None)
    variables.pop("APPVEYOR_URL")  # no service runs this build
    named = _named(built.configuration, planned.job)
    variables.update(job_variables(named))
    variables.update(given)
    honoured = runner_settings(configuration)
    if not cache:
        honoured["cacheEntries"] = []
    honoured["cloneScripts"] = []  # the job builds the working tree: its fetch replaces clone_script
    return {
        "jobId": planned.job.job_id,
        "jobName": planned.name,
        "title": f"{checkout.name} {built.version}",
        "timeoutSeconds": TIMEOUT_SECONDS,
        "heartbeatSeconds": 0.5,  # Ctrl-C reaches the job within half a second
        "source": {
            "url": source_url,
            "credentials": False,
            "ref": checkout.ref,
            "commitId": checkout.commit["commitId"],
            "depth": fetch_depth(configuration),
        },  # fmt: skip
        "configuration": honoured,
        "variables": variables,
        "secrets": [value for name, value in given.items() if name in _secure_names(named) and value],
        "warnings": job_warnings(built.configuration, planned.job.spec),
        "cacheSave": cache,
        "inlineDeployments": 0,  # deploy: entries are the service's to deliver
        "logTailOnFinish": True,
        "idToken": False,  # no ID tokens: only the service signs them
        "projectSlug": project.slug,
    }


def job_variables(named: list[Json]) -> dict[str, str]:
    """The job's named variables as its scripts see them, the last of a name winning; secure ones are left out
    (only the service can decrypt them)."""
    variables: dict[str, str] = {}
    for variable in named:
        name, value = variable.get("name"), variable.get("value") or {}
        if not name:
            continue
        if value.get("isEncrypted"):
            variables.pop(name, None)
            continue
        variables[name] = str(value.get("value") or "")
    return variables
