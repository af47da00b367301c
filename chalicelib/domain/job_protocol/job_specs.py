"""What a job's runner is handed with its job token: its job spec, the runner as a zip, its clone credentials."""

from __future__ import annotations

import time

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.domain.builds.job_environment import job_environment
from chalicelib.domain.configuration.job_overrides import (
    fetch_depth,
    job_configuration,
    job_warnings,
    runner_settings,
)
from chalicelib.domain.deployments.inline_deployments import deploys_in
from chalicelib.domain.forges.repository_credentials import clone_source
from chalicelib.domain.job_identity import id_tokens
from chalicelib.domain.job_identity.job_tokens import build_and_project
from chalicelib.domain.projects.request_variables import withholds_secrets
from chalicelib.errors import Conflict, NotFound
from chalicelib.executors import kinds
from chalicelib.protocol.job_spec import JobSpec
from chalicelib.store import jobs as job_store

# A container image is the build's own code, and on CodeBuild it runs the runner itself (its python3): for a pull
# request, whose author chose the image, the runner is not to be trusted with the project's credentials.
UNTRUSTED_IMAGE_CLONE = (
    "A pull request build in a container image of its own choosing gets no clone credentials: the image's own code "
    "runs Conveyor's runner, so it could take them. Build this private repository's pull requests with no image, "
    "in Ubuntu2204 (CodeBuild's curated image) or on a build agent."
)


def clone_credentials(job: Job) -> dict[str, str | None]:
    """The user name and password the job's runner fetches the repository with, handed once per attempt: the
    runner takes them before any script of the build runs, and a second request (a build script's, say) gets
    nothing but a Conflict. A pull request build in a container image of its author's choosing gets none."""
    build, project = build_and_project(job)
    source = clone_source(project)
    if source.credentials is None and source.ssh_key is None:
        raise NotFound("The job's repository needs no credentials.")
    if build.pull_request and kinds.of(job.executor).runner_in_users_image(job.run_on):
        raise Conflict(UNTRUSTED_IMAGE_CLONE)
    if not job_store.take_clone_credentials(job.job_id):
        raise Conflict("The job's clone credentials were handed out already: a job's runner takes them once.")
    if source.ssh_key is not None:
        return {"sshPrivateKey": source.ssh_key, "sshHostKey": source.ssh_host_key}
    assert source.credentials is not None
    return {"username": source.credentials[0], "password": source.credentials[1]}


def job_spec(job: Job, read: tuple[Build | None, Project | None] = (None, None)) -> JobSpec:
    """Everything the job's runner needs: the commit, the scripts, the variables, what to mask, the limits
    (``read``: the job's build and project as read with it, if they were)."""
    build, project = build_and_project(job, read)
    kind = kinds.of(job.executor)
    warnings = kind.runner_warnings(job)  # the log's first lines (after "Build started"): where the job runs
    environment = job_environment(project, build, job, warnings.append)
    warnings += job_warnings(build.configuration, job.spec)
    configuration = job_configuration(build.configuration, job.spec)  # with appveyor.yml's for: items for the job
    config = settings()
    # id_token: the request URL and token, the token masked as a secret is (none for a job that does not ask)
    oidc_variables, oidc_secrets = id_tokens.request_variables(
        id_tokens.Subject(project, build, job), config.runner_api_url, warnings.append
    )
    source = clone_source(project)
    return {
        "jobId": job.job_id,
        "jobName": job.name,
        "title": f"{project.name} {build.version}",
        "timeoutSeconds": kind.job_timeout(),
        "heartbeatSeconds": config.heartbeat_seconds,
        "source": {
            "url": source.url,
            "credentials": source.credentials is not None or source.ssh_key is not None,  # taken once, apart
            "ref": build.ref,
            "commitId": build.commit.get("commitId", ""),
            "depth": fetch_depth(configuration),
        },
        "configuration": runner_settings(configuration),  # a deployment's or a notification's settings stay here
        "variables": {**environment.variables, **oidc_variables},
        "secrets": [*environment.secrets, *oidc_secrets],
        "warnings": warnings,
        "cacheSave": not withholds_secrets(build),  # what it made is not restored by a build that gets secrets
        "inlineDeployments": deploys_in(project, build, job),  # before_deploy and after_deploy run for them
        "logTailOnFinish": True,  # the finish takes the log's last chunk (a runner asks: services before did not)
        # the service minted the ID token variables: the runner forwards ID token requests only then, and only to
        # this service's own route (appveyor.yml may name the variables too, and any URL in them)
        "idToken": bool(oidc_variables),
        "projectSlug": project.slug,  # the build folder's name: appveyor.yml may set APPVEYOR_PROJECT_SLUG
    }


def runner_package(job: Job) -> bytes:
    """The runner as a zip, for a job whose executor starts from an image of the user's (CodeBuild). The job's
    lease starts again: its runner heartbeats only once its libraries are installed."""
    from chalicelib.executors.runner_package import runner_zip  # read from disk only where it is asked for

    if not kinds.of(job.executor).fetches_runner:
        raise NotFound("The runner is fetched only by a CodeBuild job's buildspec.")
    job_store.renew_lease(job.job_id, int(time.time()) + settings().lease_seconds)
    return runner_zip()
