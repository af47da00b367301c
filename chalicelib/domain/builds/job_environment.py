"""The variables a job's scripts see: AppVeyor's, then the project's, the matrix row's and the request's.

The service computes them and hands them to the job's runner in its spec (secure ones decrypted only where the
build may see them); the runner adds the few that are its own (HOME, the build folder, APPVEYOR_API_URL) and
passes them to the scripts only, never to its own process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.core.repository_names import public_repository_name
from chalicelib.domain.configuration.job_overrides import job_configuration
from chalicelib.domain.forges.commit_statuses import MAX_BUILD_MESSAGES
from chalicelib.domain.projects import request_variables
from chalicelib.domain.shared import secrets
from chalicelib.errors import Invalid
from chalicelib.shapes.time import timestamp
from chalicelib.store import builds as build_store


@dataclass
class JobEnvironment:
    variables: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)  # plain values to mask in the log


def job_environment(project: Project, build: Build, job: Job, warn: Callable[[str], None]) -> JobEnvironment:
    """Every variable of the job, and the secret values among them."""
    env = JobEnvironment()
    env.variables.update(appveyor_variables(project, build, job, None))
    configuration = job_configuration(build.configuration, job.spec)  # with appveyor.yml's for: items for the job
    named: list[dict[str, Any]] = [*configuration.get("environmentVariables", []), *job.spec.get("variables", [])]
    withheld = request_variables.withholds_secrets(build)
    warn_named = warn
    if withheld and build.pull_request is None:  # said once, not for each secure variable
        warn(request_variables.WITHHELD_NOTICE)
        warn_named = _unsaid

    def unset(text: str) -> None:
        """A secure variable left unset: said in the job's log and among the build's messages."""
        warn(text)
        note = {"category": "warning", "message": text[:4096], "created": timestamp(datetime.now(UTC))}
        build_store.add_message(build.project_id, build.build_id, note, MAX_BUILD_MESSAGES)

    owner = secrets.project_owner(project)
    _add_named(env, owner, named, decrypt_secrets=not withheld, warn=warn_named, unset=unset)
    env.variables.update(_requested(build.request_variables, warn))
    return env


def _requested(variables: dict[str, str], warn: Callable[[str], None]) -> dict[str, str]:
    """The start request's variables, but for names no start request may set (a build queued before they were
    refused, say)."""
    refused = request_variables.refused_names(variables)
    if refused:
        warn(
            f"Not set from the start request: {', '.join(refused)} (a start request may not change how programs start)."
        )
    return {name: value for name, value in variables.items() if name not in refused}


def _unsaid(_: str) -> None:
    """A warning said once already."""


def _add_named(
    env: JobEnvironment,
    owner: secrets.Owner,
    named: Iterable[dict[str, Any]],
    decrypt_secrets: bool,
    warn: Callable[[str], None],
    unset: Callable[[str], None],
) -> None:
    for variable in named:
        name, value = variable.get("name"), variable.get("value") or {}
        if not name:
            continue
        text = value.get("value")
        if text is None:
            text = ""
        if value.get("isEncrypted"):
            if not decrypt_secrets:
                warn(f"Secure variable {name} is not set: secure variables are not decrypted in pull request builds.")
                continue
            try:
                text = secrets.decrypt(owner, f"variable/{name}", text)
            except Invalid as error:
                unset(_why_unset(str(name), str(text), error))
                continue
            env.secrets.append(text)
        env.variables[name] = str(text)


def _why_unset(name: str, value: str, error: Invalid) -> str:
    """Why a secure variable is left unset: a value Conveyor cannot decrypt never becomes the variable's value."""
    if not secrets.is_token(value):  # AppVeyor's encrypted value (or any other service's), or a plain text
        what = "encrypted by AppVeyor, say" if secrets.foreign_ciphertext(value) else "not encrypted for Conveyor"
        return f"Secure variable {name} is not set: its value is not one Conveyor can decrypt ({what}). " + (
            secrets.HOW_TO_ENCRYPT + f" Or set {name} in this project's settings and use the token shown there."
        )
    return (
        f"Secure variable {name} is not set: {error.message} A secure value works only where it was set: set {name} "
        "in this project's settings and use the token shown there (or encrypt it with POST /api/account/encrypt)."
    )


def appveyor_variables(project: Project, build: Build, job: Job, build_folder: Path | None) -> dict[str, str]:
    """The APPVEYOR_* variables every build sees (reference: AppVeyor's environment-variables page).

    APPVEYOR_BUILD_FOLDER is set only when ``build_folder`` is known here; a runner sets its own.
    """
    commit, flags = build.commit, build.flags
    image = job.spec.get("image") or "Ubuntu"
    variables = {
        "APPVEYOR": "true",
        "CI": "true",
        "CI_LINUX": "true",  # a build agent on Windows sets the Windows values itself (runner/windows/environment.py)
        "CI_WINDOWS": "false",
        "APPVEYOR_URL": settings().base_url or "",
        "APPVEYOR_ACCOUNT_NAME": project.account_name,
        "APPVEYOR_PROJECT_ID": str(project.project_id),
        "APPVEYOR_PROJECT_NAME": project.name,
        "APPVEYOR_PROJECT_SLUG": project.slug,
        "APPVEYOR_BUILD_ID": str(build.build_id),
        "APPVEYOR_BUILD_NUMBER": str(build.build_number),
        "APPVEYOR_BUILD_VERSION": build.version,
        "APPVEYOR_BUILD_WORKER_IMAGE": image,
        "APPVEYOR_JOB_ID": job.job_id,
        "APPVEYOR_JOB_NAME": job.name,
        "APPVEYOR_JOB_NUMBER": str(job.number),
        "APPVEYOR_REPO_PROVIDER": project.repository_type,
        "APPVEYOR_REPO_SCM": project.repository_scm,
        "APPVEYOR_REPO_NAME": public_repository_name(project),  # never a password stored in an old clone URL
        "APPVEYOR_REPO_BRANCH": build.branch,
        "APPVEYOR_REPO_TAG": "true" if build.ref.startswith("refs/tags/") else "false",
        "APPVEYOR_REPO_COMMIT": commit.get("commitId", ""),
        "APPVEYOR_REPO_COMMIT_AUTHOR": commit.get("authorName", ""),
        "APPVEYOR_REPO_COMMIT_AUTHOR_EMAIL": commit.get("authorEmail", ""),
        "APPVEYOR_REPO_COMMIT_TIMESTAMP": commit.get("committed", ""),
        "APPVEYOR_REPO_COMMIT_MESSAGE": commit.get("message", ""),
        "APPVEYOR_REPO_COMMIT_MESSAGE_EXTENDED": commit.get("messageExtended") or "",
    }
    if flags.get("forced"):  # started through the API, not by a webhook (builds stored before say neither)
        variables["APPVEYOR_FORCED_BUILD"] = "True"
    if build_folder is not None:
        variables["APPVEYOR_BUILD_FOLDER"] = str(build_folder)
    if build.ref.startswith("refs/tags/"):
        variables["APPVEYOR_REPO_TAG_NAME"] = build.ref.removeprefix("refs/tags/")
    if build.pull_request:
        variables["APPVEYOR_PULL_REQUEST_NUMBER"] = str(build.pull_request["pullRequestId"])
        variables["APPVEYOR_PULL_REQUEST_TITLE"] = build.pull_request["pullRequestName"]
        pull_request = build.pull_request
        # the head's commit: the merge commit built is GitHub's, not the developer's (builds stored before: the head)
        variables["APPVEYOR_PULL_REQUEST_HEAD_COMMIT"] = pull_request.get("pullRequestHeadCommitId") or commit.get(
            "commitId", ""
        )
        for name, field in (("REPO_NAME", "pullRequestHeadRepository"), ("REPO_BRANCH", "pullRequestHeadBranch")):
            if pull_request.get(field):
                variables[f"APPVEYOR_PULL_REQUEST_HEAD_{name}"] = pull_request[field]
    if flags.get("scheduled"):  # started by the project's schedule
        variables["APPVEYOR_SCHEDULED_BUILD"] = "True"
    if flags.get("reBuild"):
        variables["APPVEYOR_RE_BUILD"] = "True"
    if flags.get("reRunIncomplete"):
        variables["APPVEYOR_RE_RUN_INCOMPLETE"] = "True"
    for name, key in (("PLATFORM", "platform"), ("CONFIGURATION", "configuration")):
        if job.spec.get(key):
            variables[name] = str(job.spec[key])
    return variables
