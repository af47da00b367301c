"""What an inline deployment delivers, read when it runs: its ``deploy:`` entry's settings from the build's stored
configuration (where secure values stay tokens), the job's variables and artifacts.

A secure setting decrypts only as a secret of the build's own project (its ``setting NAME``), and never for a pull
request's build, whose author wrote the configuration (such builds start no inline deployment; this says so
again). Every secret, the settings' and the job's secure variables', is masked in the deployment's log; the
provider is handed the job's plain variables only (a Webhook posts them), the secrets reaching it only through
the settings that name them (``password: $(FTP_PASSWORD)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chalicelib import deploy
from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment, InlineEntry
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.deploy.destinations import DESTINATION_SETTINGS, deploy_destination
from chalicelib.domain.builds.job_environment import appveyor_variables, job_environment
from chalicelib.domain.deployments.delivery_inputs import DeploymentInputs, job_artifacts, substitute
from chalicelib.domain.deployments.inline_deployments import job_entry
from chalicelib.domain.projects.request_variables import why_untrusted
from chalicelib.domain.shared import secrets
from chalicelib.errors import Invalid
from chalicelib.store import jobs as job_store


class _Refused(Exception):
    """The deployment cannot deliver; str() says why, to its log."""


def inline_inputs(project: Project, build: Build, deployment: Deployment, folder: Path) -> DeploymentInputs:
    """The artifacts, variables and settings of an inline deployment's job; ``refusal`` says why it cannot run."""
    assert deployment.inline is not None
    jobs = [job for job in job_store.get_jobs(build.job_ids) if job.job_id == deployment.build_job_id]
    notes: list[str] = []
    try:
        _check_trusted(build, jobs)
        entry = _entry(build, jobs[0], deployment.inline)
        environment = job_environment(project, build, jobs[0], notes.append)
        # the service's own variables win over a start request's: who starts a build does not choose the
        # repository, commit or tag a release is made of
        built_in = appveyor_variables(project, build, jobs[0], folder)
        variables = {**environment.variables, **built_in}
        settings, secret_values = _delivery_settings(project, build, entry, variables, built_in)
        if (refusal := deploy.inline_refusal(deployment.inline.provider, settings)) is not None:
            raise _Refused(refusal)
    except _Refused as refusal:
        return DeploymentInputs(jobs, [], {}, {}, [], notes, refusal=str(refusal))
    hidden = set(environment.secrets)
    return DeploymentInputs(
        build_jobs=jobs,
        artifacts=job_artifacts(jobs),  # the provider picks those its artifact setting names
        variables={name: value for name, value in variables.items() if value not in hidden},
        settings=settings,
        secrets=[*environment.secrets, *secret_values],
        notes=notes,
    )


def _check_trusted(build: Build, jobs: list[Job]) -> None:
    """Refuse a build whose deploy: entries may not deliver: a pull request's, an untrusted start's, or one whose
    job is gone."""
    if build.pull_request is not None:
        raise _Refused("Inline deployments do not run for pull request builds.")
    if (reason := why_untrusted(build)) is not None:
        raise _Refused(f"Inline deployments do not run for this build: {reason}.")
    if not jobs:
        raise _Refused("The build job this deployment delivers from no longer exists.")


def _delivery_settings(
    project: Project, build: Build, entry: dict[str, Any], variables: dict[str, str], built_in: dict[str, str]
) -> tuple[dict[str, str], list[str]]:
    """The entry's settings with variables substituted, and its secrets. Where it delivers takes no start request's
    variable: who starts a build does not choose where its secrets (secure settings, or secure variables a setting
    names) go; a destination naming a variable the deployment lacks is refused."""
    unrequested = {name: value for name, value in variables.items() if name not in build.request_variables}
    unrequested |= built_in
    settings, secret_values = _settings(project, entry)
    settings = {
        name: substitute(value, unrequested if name.lower() in DESTINATION_SETTINGS else variables)
        for name, value in settings.items()
    }
    for name, value in settings.items():
        if name.lower() in DESTINATION_SETTINGS and "$(" in value:
            raise _Refused(f"The deploy: entry's {name} '{value}' names a variable this deployment does not have.")
    return settings, secret_values


def _entry(build: Build, job: Job, inline: InlineEntry) -> dict[str, Any]:
    entry = job_entry(build, job, inline.entry)
    if entry is None or entry.get("provider") != inline.provider:
        raise _Refused(
            f"The build's configuration no longer holds deploy: entry {inline.entry + 1} ({inline.provider})."
        )
    return entry


def _settings(project: Project, entry: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The entry's provider settings by name, secure ones decrypted as the project's for the entry's destination,
    and those secrets."""
    owner = secrets.project_owner(project)
    destination = deploy_destination(entry)
    settings: dict[str, str] = {}
    secret_values: list[str] = []
    named = [setting for setting in entry.get("providerSettings") or [] if isinstance(setting, dict)]
    names = [str(setting.get("name", "")).lower() for setting in named]
    if twice := sorted({name for name in names if names.count(name) > 1}):  # a provider reads one of them
        raise _Refused(f"The deploy: entry sets {', '.join(twice)} twice (its name written in two ways): set it once.")
    for setting in named:
        if not isinstance(setting.get("name"), str):
            continue
        name, value = setting["name"], setting.get("value") or {}
        text = str(value.get("value") or "")
        if value.get("isEncrypted") and text:
            _check_destination(entry)
            try:
                text = secrets.decrypt(owner, f"setting/{name}{destination}", text)
            except Invalid:
                raise _Refused(
                    f"The secure setting {name} cannot be used here: a secure value of a deploy: entry works only in "
                    "this project, with the provider and destination (host, server, url, repository, bucket...) it was "
                    f"set with. Set the entry in this project's settings with {name}'s plain value (a token stored "
                    "before tokens were bound to their destination will not do), and use the token shown."
                ) from None
            secret_values.append(text)
        settings[name] = text
    return settings, secret_values


def _check_destination(entry: dict[str, Any]) -> None:
    """An entry with a secret names its destination as written: a $(VARIABLE) there could be set by whoever starts
    a build (its request's variables), and send the secret elsewhere; and a secure destination is no part of what
    the secrets are bound to (deploy/destinations.py), so one added beside a stored password would take it to a
    server of whoever may change the settings."""
    named = [setting for setting in entry.get("providerSettings") or [] if isinstance(setting, dict)]
    other_secrets = any(
        (setting.get("value") or {}).get("isEncrypted")
        and str(setting.get("name", "")).lower() not in DESTINATION_SETTINGS
        for setting in named
    )
    for setting in named:
        name = str(setting.get("name", ""))
        value = setting.get("value") or {}
        if name.lower() not in DESTINATION_SETTINGS:
            continue
        if value.get("isEncrypted") and other_secrets:  # a secret URL alone goes where it says
            raise _Refused(
                f"The deploy: entry's {name} is secure: an entry with secure settings must name its destination in "
                "plain text, for its secrets go only to the destination they were set for."
            )
        if "$(" in str(value.get("value") or ""):
            raise _Refused(
                f"The deploy: entry's {name} is '{value.get('value')}': an entry with secure settings must name its "
                "destination as it is, without a $(VARIABLE) in it."
            )
