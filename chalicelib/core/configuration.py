"""A project's and a build's configuration: appveyor.yml's settings in the API's camelCase shape (the spec's
Configuration, ``settings.configuration``), as a project and each of its builds store it.

domain/configuration/ reads it from appveyor.yml and writes it back (yamlconfig/defaults.py holds each field's
default); everyone else reads it through this type, so mypy checks each key read. Every field is optional: a
configuration stored before a setting existed lacks it (read such a one with ``.get``), as does a visitor's view of a
project (none at all). The JSON stored is this shape as it always was: the type changes no stored item.
"""

from __future__ import annotations

from typing import Any, TypedDict

Json = dict[str, Any]


class Configuration(TypedDict, total=False):
    """Every field of a stored configuration, in yamlconfig/defaults.py's order (scripts are ``{language, script}``,
    values ``{value}``, variables ``{name, value: {isEncrypted, value}}``, matrix rows ``{variables}``)."""

    initScripts: list[Json]
    includeBranches: list[Json]
    excludeBranches: list[Json]
    onBuildSuccessScripts: list[Json]
    onBuildErrorScripts: list[Json]
    patchAssemblyInfo: bool
    assemblyInfoFile: str
    assemblyVersionFormat: str
    assemblyFileVersionFormat: str
    assemblyInformationalVersionFormat: str
    operatingSystem: list[Json]
    services: list[Json]
    shallowClone: bool
    environmentVariables: list[Json]
    environmentVariablesMatrix: list[Json]
    installScripts: list[Json]
    hostsEntries: list[Json]
    buildMode: str | None
    platform: list[Json]
    configuration: list[Json]
    packageWebApplicationProjects: bool
    packageWebApplicationProjectsXCopy: bool
    packageAzureCloudServiceProjects: bool
    packageNuGetProjects: bool
    msBuildVerbosity: str
    buildScripts: list[Json]
    beforeBuildScripts: list[Json]
    afterBuildScripts: list[Json]
    testMode: str | None
    testAssemblies: list[Json]
    testCategories: list[Json]
    testCategoriesMatrix: list[Json]
    testScripts: list[Json]
    beforeTestScripts: list[Json]
    afterTestScripts: list[Json]
    deployMode: str | None
    deployments: list[Json]
    deployScripts: list[Json]
    beforeDeployScripts: list[Json]
    afterDeployScripts: list[Json]
    matrixFastFinish: bool
    matrixAllowFailures: list[Json]
    artifacts: list[Json]
    notifications: list[Json]  # each in appveyor.yml's names and forms
    branchesMode: str
    skipTags: bool
    skipNonTags: bool
    skipCommitsMessage: str | None
    skipCommitsAuthor: str | None
    skipCommitsFiles: list[Json]
    onlyCommitsMessage: str | None
    onlyCommitsAuthor: str | None
    onlyCommitsFiles: list[Json]
    skipBranchWithPullRequests: bool
    maxJobs: int | None
    buildCloud: list[Json]
    stacks: list[Json]
    cloneScripts: list[Json]
    cloneFolder: str | None
    cloneDepth: int | None
    matrixExclude: list[Json]
    matrixOnly: list[Json]
    matrixExcept: list[Json]
    cacheEntries: list[Json]
    patchDotnetCsproj: bool
    dotnetCsprojFile: str
    dotnetCsprojVersionFormat: str
    dotnetCsprojVersionPrefixFormat: str | None
    dotnetCsprojPackageVersionFormat: str
    dotnetCsprojAssemblyVersionFormat: str
    dotnetCsprojFileVersionFormat: str
    dotnetCsprojInformationalVersionFormat: str
    configureNuGetAccountSource: bool
    configureNuGetProjectSource: bool
    disableNuGetPublishOnPullRequests: bool
    disableNuGetPublishForOctopusPackages: bool
    doNotIncrementBuildNumberOnPullRequests: bool
    xamarinRegisterAndroidProduct: bool
    xamarinRegisterIosProduct: bool
    xamarinEmail: Json | None  # {isEncrypted, value}
    xamarinPassword: Json | None
    msBuildProjectFileName: str | None
    msBuildInParallel: bool
    packageWebApplicationProjectsBeanstalk: bool
    packageWebApplicationProjectsOctopus: bool
    packageAzureWebJobProjects: bool
    packageAspNetCoreProjects: bool
    packageDotnetConsoleProjects: bool
    packageNuGetSymbols: bool
    includeNuGetReferences: bool
    beforePackageScripts: list[Json]
    testAssembliesMode: str
    testCategoriesMode: str
    onBuildFinishScripts: list[Json]
    idToken: bool  # the job's OpenID Connect ID tokens (domain/job_identity/id_tokens.py)
    idTokenPullRequests: bool  # ...and for builds whose secrets are withheld: read from the project's settings only
    jobOverrides: list[JobOverride]  # a build's only: its for: items that select jobs (yamlconfig/for_items.JOB_ITEMS)


# An appveyor.yml for: item that selects jobs (matrix only/except), as a build's configuration keeps it
# (yamlconfig/for_items.job_item): where it is written, its matrix rows, the fields it overrides, those of the
# filters that skip its jobs, and the keys it ignores.
JobOverride = TypedDict(
    "JobOverride",
    {
        "item": str,
        "only": list[Json],
        "except": list[Json],
        "fields": Configuration,
        "filters": Configuration,
        "ignored": list[str],
    },
)
