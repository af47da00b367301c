"""The job's spec, the one thing a runner is told about its job (``JobClient.spec``): its types, which the service
(domain/job_protocol/job_specs.job_spec) and the runner both import, and what a key an older service did not send
means."""

from __future__ import annotations

from typing import Any, TypedDict, cast

# JSON, its keys the API's camelCase. mypy checks both sides against these types (the runner reads each key with [],
# so one the type lacks is an error), and tests/unit/protocol/test_job_spec.py that the service sends each key and no
# other: a setting neither side can forget. A runner ignores keys it does not know (a newer service may send more),
# and reads a key a service from before did not send as read_spec says.

Json = dict[str, Any]


class JobConfiguration(TypedDict):
    """The settings of the job's configuration (appveyor.yml's, its for: items that select the job applied) that a
    runner honours, in the order they are sent: each one the configuration holds (one a build stored before the
    setting existed does not hold, the runner reads as _unsent_settings says), and no other (the settings of
    deployments and notifications stay with the service)."""

    stacks: list[Json]  # stack: (``node 18``, ``mysql``), applied before init (runner/stacks.py)
    services: list[Json]  # services:, started before init
    initScripts: list[Json]
    cloneScripts: list[Json]
    cloneFolder: str | None
    cloneDepth: int | None
    shallowClone: bool
    installScripts: list[Json]
    beforeBuildScripts: list[Json]
    buildMode: str | None
    buildScripts: list[Json]
    msBuildProjectFileName: str | None  # build: project: (None: MSBuild finds the one in the build folder)
    msBuildVerbosity: str  # build: verbosity: (quiet, minimal, normal or detailed)
    msBuildInParallel: bool  # build: parallel: (/m)
    beforePackageScripts: list[Json]
    afterBuildScripts: list[Json]
    beforeTestScripts: list[Json]
    testMode: str | None
    testScripts: list[Json]
    afterTestScripts: list[Json]
    artifacts: list[Json]
    deployMode: str | None
    beforeDeployScripts: list[Json]
    deployScripts: list[Json]
    afterDeployScripts: list[Json]
    onBuildSuccessScripts: list[Json]
    onBuildErrorScripts: list[Json]
    onBuildFinishScripts: list[Json]
    cacheEntries: list[Json]


RUNNER_SETTINGS: tuple[str, ...] = tuple(JobConfiguration.__annotations__)  # what the service keeps of a configuration


class JobSource(TypedDict):
    """The commit the job fetches, and whether its repository needs credentials (handed apart, once)."""

    url: str
    credentials: bool
    ref: str
    commitId: str
    depth: int | None


class JobSpec(TypedDict):
    """Everything the job runs: its source, the settings of its configuration a runner honours, its variables,
    what to mask in its log, its limits."""

    jobId: str
    jobName: str
    title: str
    timeoutSeconds: int
    heartbeatSeconds: float
    source: JobSource
    configuration: JobConfiguration
    variables: dict[str, str]
    secrets: list[str]
    warnings: list[str]
    cacheSave: bool  # whether the build cache is saved (not by a build whose secrets are withheld)
    inlineDeployments: int  # deploy: entries that deploy from the job (before_deploy and after_deploy run for them)
    logTailOnFinish: bool  # the finish takes the log's last chunk
    idToken: bool  # the service minted the job's ID token request variables (appveyor.yml cannot set this)
    projectSlug: str  # the build folder's name (not APPVEYOR_PROJECT_SLUG, which appveyor.yml may set)


def _unsent_settings() -> JobConfiguration:
    """What each setting the service did not send means to a runner."""
    return {
        "stacks": [],
        "services": [],
        "initScripts": [],
        "cloneScripts": [],
        "cloneFolder": None,
        "cloneDepth": None,
        "shallowClone": False,
        "installScripts": [],
        "beforeBuildScripts": [],
        "buildMode": None,
        "buildScripts": [],
        "msBuildProjectFileName": None,
        "msBuildVerbosity": "minimal",
        "msBuildInParallel": False,
        "beforePackageScripts": [],
        "afterBuildScripts": [],
        "beforeTestScripts": [],
        "testMode": None,
        "testScripts": [],
        "afterTestScripts": [],
        "artifacts": [],
        "deployMode": None,
        "beforeDeployScripts": [],
        "deployScripts": [],
        "afterDeployScripts": [],
        "onBuildSuccessScripts": [],
        "onBuildErrorScripts": [],
        "onBuildFinishScripts": [],
        "cacheEntries": [],
    }


def read_spec(sent: Json) -> JobSpec:
    """The spec as sent, with what a key it lacks means: a service from before sent no inlineDeployments (none
    deploy), logTailOnFinish (the finish takes no tail), idToken (no ID tokens), projectSlug (the folder is
    "project") or source credentials (none are taken)."""
    source = {"credentials": False, **sent["source"]}
    configuration = {**_unsent_settings(), **(sent.get("configuration") or {})}
    return cast(
        JobSpec,
        {
            "inlineDeployments": 0,
            "logTailOnFinish": False,
            "idToken": False,
            **sent,
            "source": source,
            "configuration": configuration,
        },
    )
