"""appveyor.yml settings a job's executor cannot honour: said when the build is queued, never ignored in silence.

Every top-level key of AppVeyor's appveyor.yml reference is one of three kinds (tests/functional/
test_unhonoured_settings.py walks them all):

- honoured: the service or the runner does what AppVeyor does (HONOURED says where);
- refused: a job that sets it fails at once, naming it, because a build run without it would not be the build its
  author wrote (a test with no database, a host name that resolves elsewhere, a missing tool version). A build
  agent runs on its owner's machine, which provides these as it is set up, so there it is a warning instead.
  stack: and services: are honoured where a job runs in Conveyor's Ubuntu image (runner/stacks.py), and refused
  elsewhere, or for what the image cannot give (domain/configuration/stacks.py);
- warned: Windows' and AppVeyor's own facilities (MSBuild, AssemblyInfo patching, NuGet feeds, Xamarin, build
  clouds) that a Linux runner has no use for: the build runs, and its messages name each one set. A job on a Windows
  build agent runs MSBuild (HONOURED_ON_WINDOWS): its build's messages name only what it does not do there
  (WARNED_ON_WINDOWS: build:'s packaging).
"""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.core.configuration import Configuration
from chalicelib.core.jobs import Job
from chalicelib.domain.configuration import packaging, stacks
from chalicelib.domain.configuration.job_overrides import job_configuration

# cache: entries a job may save, each up to 3 GiB and within a job's 5 GiB (domain/job_protocol/runner_cache.py)
MAX_CACHE_ENTRIES = 16

# key -> where the service honours it
HONOURED: dict[str, str] = {
    "version": "the build's version",
    "branches": "webhook builds' filters (domain/configuration/filters.py)",
    "skip_tags": "webhook builds' filters",
    "skip_non_tags": "webhook builds' filters",
    "skip_commits": "webhook builds' filters",
    "only_commits": "webhook builds' filters",
    "skip_branch_with_pr": "webhook builds' filters",
    "max_jobs": "the project's running jobs (domain/execution/job_slots.py)",
    "image": "the job's executor (executors/images.py)",
    "init": "the runner",
    "clone_folder": "the runner, which says where it builds instead (a sandbox has its own folder)",
    "clone_depth": "the runner's fetch",
    "shallow_clone": "the runner's fetch, of depth 1",
    "clone_script": "the runner",
    "environment": "the job's variables and matrix",
    "id_token": "the job's ID token request variables (domain/job_identity/id_tokens.py)",
    "id_token_pull_requests": "ID tokens for builds whose secrets are withheld, from the project's settings only "
    "(domain/job_identity/id_tokens.py): a repository's appveyor.yml is the pull request's own",
    "matrix": "the build's jobs (domain/configuration/matrix.py)",
    "cache": "the runner's build cache",
    "install": "the runner",
    "platform": "the build's jobs and $PLATFORM",
    "configuration": "the build's jobs and $CONFIGURATION",
    "build_script": "the runner",
    "before_build": "the runner",
    "before_package": "the runner",
    "after_build": "the runner",
    "test_script": "the runner",
    "before_test": "the runner",
    "after_test": "the runner",
    "artifacts": "the runner's uploads",
    "before_deploy": "the runner",
    "deploy": "the build's deployments (domain/deployments/inline_deployments.py)",
    "deploy_script": "the runner",
    "after_deploy": "the runner",
    "on_success": "the runner",
    "on_failure": "the runner",
    "on_finish": "the runner",
    "notifications": "the build's notifications",
    "for": "the build's configuration, and each job's (domain/configuration/yamlconfig/for_items.py)",
}
# key -> where a job on a Windows build agent honours it (WARNED says what it does not do there, and elsewhere)
HONOURED_ON_WINDOWS: dict[str, str] = {
    "build": "the runner (MSBuild on a Windows build agent: runner/windows/msbuild.py)"
}

_IN_IMAGE = "it is applied in Conveyor's Ubuntu image only (image: Ubuntu2204 or none, in a container per job)"
# key -> (whether the job's configuration sets it, why the service's executors cannot honour it)
REFUSED: dict[str, tuple[Callable[[Configuration], bool], str]] = {
    "services": (lambda c: bool(c.get("services")), _IN_IMAGE),
    "stack": (lambda c: bool(c.get("stacks")), _IN_IMAGE),
    "hosts": (
        lambda c: bool(c.get("hostsEntries")),
        "a job cannot change the host names its runner resolves: use the addresses themselves",
    ),
}

_STACK_KEYS = ("services", "stack")

_NUGET = ("configureNuGetAccountSource", "configureNuGetProjectSource", "disableNuGetPublishOnPullRequests")
_XAMARIN = ("xamarinRegisterAndroidProduct", "xamarinRegisterIosProduct", "xamarinEmail", "xamarinPassword")
WARNED: dict[str, tuple[Callable[[Configuration], bool], str]] = {
    "build_cloud": (lambda c: bool(c.get("buildCloud")), "there are no build clouds: image: chooses the executor"),
    "assembly_info": (lambda c: bool(c.get("patchAssemblyInfo")), "AssemblyInfo files are not patched"),
    "dotnet_csproj": (lambda c: bool(c.get("patchDotnetCsproj")), ".csproj files are not patched"),
    "nuget": (lambda c: any(c.get(key) for key in _NUGET), "this service has no NuGet feeds of its own"),
    "xamarin": (lambda c: any(c.get(key) for key in _XAMARIN), "Xamarin products are not registered"),
    "pull_requests": (
        lambda c: bool(c.get("doNotIncrementBuildNumberOnPullRequests")),
        "pull request builds take build numbers like every build",
    ),
    "build": (
        lambda c: (
            c.get("buildMode") == "msbuild" and bool(c.get("msBuildProjectFileName") or packaging.packaging_set(c))
        ),
        "MSBuild is not available on a Linux runner: use build_script",
    ),
    "test": (
        lambda c: c.get("testMode") == "auto" and bool(c.get("testAssemblies") or c.get("testCategories")),
        "test assemblies are not discovered on a Linux runner: use test_script",
    ),
}


# key -> what a job on a Windows build agent does not do of it, said in place of WARNED's words (None: nothing)
WARNED_ON_WINDOWS: dict[str, Callable[[Configuration], str | None]] = {"build": packaging.not_done}


def refusals(
    configuration: Configuration,
    jobs: list[Job],
    refused: dict[str, str],
    outside_image: Callable[[Job], str | None],
    provides_setup: Callable[[Job], bool],
) -> dict[str, str]:
    """Why each job not ``refused`` already cannot run as written, by job id (none: it can). ``outside_image``
    says where a job runs when that is not Conveyor's Ubuntu image (None: it is), which alone applies stack: and
    services:, and refuses what it cannot give (domain/configuration/stacks.py); ``provides_setup``, whether the
    job's machine provides what REFUSED's settings ask itself (a build agent's: warned instead)."""
    found: dict[str, str] = {}
    for job in jobs:
        if job.job_id in refused:
            continue
        job_config = job_configuration(configuration, job.spec)
        reasons = [] if provides_setup(job) else _refused_here(job, job_config, outside_image)
        if (count := len(job_config.get("cacheEntries") or [])) > MAX_CACHE_ENTRIES:
            reasons.append(f"appveyor.yml cache: has {count} entries: a job saves at most {MAX_CACHE_ENTRIES}.")
        if reasons:
            found[job.job_id] = " ".join(reasons)
    return found


def _refused_here(job: Job, job_config: Configuration, outside_image: Callable[[Job], str | None]) -> list[str]:
    """Why the job cannot run as written where the service runs it (a build agent's owner provides these)."""
    reasons = []
    where = outside_image(job) if stacks.asks(job_config) else None
    for key in _set(job_config, REFUSED):
        if key not in _STACK_KEYS:
            reasons.append(f"appveyor.yml {key}: is not honoured: {REFUSED[key][1]}.")
        elif where is not None:
            reasons.append(f"appveyor.yml {key}: is not honoured: {REFUSED[key][1]}, and this job runs {where}.")
    if where is None and (why := stacks.refusal(job_config)):
        reasons.append(f"appveyor.yml stack: and services: cannot be honoured: {why}.")
    return reasons


def warnings(configuration: Configuration, jobs: list[Job], provides_setup: Callable[[Job], bool]) -> list[str]:
    """What the build's messages say of the settings its jobs set and the service does not honour (each once);
    ``provides_setup``: as refusals' says."""
    said: dict[str, None] = {}  # each text once, in order (a key may say one thing of Windows jobs, one of others)
    for job in jobs:
        job_config = job_configuration(configuration, job.spec)
        on_windows = packaging.runs_on_windows(job.spec)
        for key in _set(job_config, WARNED):
            if on_windows and key in WARNED_ON_WINDOWS:
                text = WARNED_ON_WINDOWS[key](job_config)
                if text is not None:
                    said.setdefault(text)
            else:
                said.setdefault(f"appveyor.yml {key}: is not honoured: {WARNED[key][1]}.")
        if provides_setup(job):
            for key in _set(job_config, REFUSED):
                said.setdefault(
                    f"appveyor.yml {key}: is not set up by Conveyor: a build agent's machine provides it itself."
                )
    return list(said)


def _set(configuration: Configuration, kinds: dict[str, tuple[Callable[[Configuration], bool], str]]) -> list[str]:
    return [key for key, (is_set, _) in kinds.items() if is_set(configuration)]
