"""The default project Configuration: the spec's shown values, then the fields appveyor.yml needs beyond them."""

from __future__ import annotations

import copy
from typing import Any, cast

from chalicelib.core.configuration import Configuration

DEFAULT_VERSION_FORMAT = "1.0.{build}"

# The fields and values of the spec's Configuration table, in the order of AppVeyor's own example.
_SPEC_FIELDS: dict[str, Any] = {
    "initScripts": [],
    "includeBranches": [],
    "excludeBranches": [],
    "onBuildSuccessScripts": [],
    "onBuildErrorScripts": [],
    "patchAssemblyInfo": False,
    "assemblyInfoFile": "**\\AssemblyInfo.*",
    "assemblyVersionFormat": "{version}",
    "assemblyFileVersionFormat": "{version}",
    "assemblyInformationalVersionFormat": "{version}",
    "operatingSystem": [],
    "services": [],
    "shallowClone": False,
    "environmentVariables": [],
    "environmentVariablesMatrix": [],
    "installScripts": [],
    "hostsEntries": [],
    "buildMode": "msbuild",
    "platform": [],
    "configuration": [],
    "packageWebApplicationProjects": False,
    "packageWebApplicationProjectsXCopy": False,
    "packageAzureCloudServiceProjects": False,
    "packageNuGetProjects": False,
    "msBuildVerbosity": "minimal",
    "buildScripts": [],
    "beforeBuildScripts": [],
    "afterBuildScripts": [],
    "testMode": "auto",
    "testAssemblies": [],
    "testCategories": [],
    "testCategoriesMatrix": [],
    "testScripts": [],
    "beforeTestScripts": [],
    "afterTestScripts": [],
    "deployMode": "providers",
    "deployments": [],
    "deployScripts": [],
    "beforeDeployScripts": [],
    "afterDeployScripts": [],
    "matrixFastFinish": False,
    "matrixAllowFailures": [],
    "artifacts": [],
    "notifications": [],
}

# Fields the spec does not show; an absent optional scalar is null (present, never omitted).
_MORE_FIELDS: dict[str, Any] = {
    "branchesMode": "exclude",  # derived: "include" when includeBranches is not empty
    "skipTags": False,
    "skipNonTags": False,
    "skipCommitsMessage": None,
    "skipCommitsAuthor": None,
    "skipCommitsFiles": [],
    "onlyCommitsMessage": None,
    "onlyCommitsAuthor": None,
    "onlyCommitsFiles": [],
    "skipBranchWithPullRequests": False,
    "maxJobs": None,
    "buildCloud": [],
    "stacks": [],
    "cloneScripts": [],
    "cloneFolder": None,
    "cloneDepth": None,
    "matrixExclude": [],
    "matrixOnly": [],
    "matrixExcept": [],
    "cacheEntries": [],
    "patchDotnetCsproj": False,
    "dotnetCsprojFile": "**\\*.csproj",
    "dotnetCsprojVersionFormat": "{version}",
    "dotnetCsprojVersionPrefixFormat": None,
    "dotnetCsprojPackageVersionFormat": "{version}",
    "dotnetCsprojAssemblyVersionFormat": "{version}",
    "dotnetCsprojFileVersionFormat": "{version}",
    "dotnetCsprojInformationalVersionFormat": "{version}",
    "configureNuGetAccountSource": False,
    "configureNuGetProjectSource": False,
    "disableNuGetPublishOnPullRequests": False,
    "disableNuGetPublishForOctopusPackages": False,
    "doNotIncrementBuildNumberOnPullRequests": False,
    "xamarinRegisterAndroidProduct": False,
    "xamarinRegisterIosProduct": False,
    "xamarinEmail": None,
    "xamarinPassword": None,
    "msBuildProjectFileName": None,
    "msBuildInParallel": False,
    "packageWebApplicationProjectsBeanstalk": False,
    "packageWebApplicationProjectsOctopus": False,
    "packageAzureWebJobProjects": False,
    "packageAspNetCoreProjects": False,
    "packageDotnetConsoleProjects": False,
    "packageNuGetSymbols": False,
    "includeNuGetReferences": False,
    "beforePackageScripts": [],
    "testAssembliesMode": "include",
    "testCategoriesMode": "include",
    "onBuildFinishScripts": [],
    "idToken": False,  # the job's OpenID Connect ID tokens (domain/job_identity/id_tokens.py)
    "idTokenPullRequests": False,  # ...and for builds whose secrets are withheld: read from the project's settings only
}

DEFAULTS: dict[str, Any] = {**_SPEC_FIELDS, **_MORE_FIELDS}


def default_configuration() -> Configuration:
    """A fresh copy of the default Configuration object."""
    return cast(Configuration, copy.deepcopy(DEFAULTS))
