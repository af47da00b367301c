"""A job's phases in AppVeyor's order, from init to on_finish: its scripts, the clone and the cache around them, the
build (scripts or MSBuild), tests and their quarantine, artifacts and the deploy phase."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Literal

from chalicelib.protocol.job_spec import JobConfiguration
from chalicelib.runner import stacks
from chalicelib.runner.artifacts import collect_artifacts
from chalicelib.runner.beneath import NotAFolder
from chalicelib.runner.job_cache import restore_job_cache, save_job_cache
from chalicelib.runner.job_source import clone
from chalicelib.runner.msbuild import run_msbuild
from chalicelib.runner.protocol import ProtocolError, TokenRevoked
from chalicelib.runner.remote_cache import RemoteCache
from chalicelib.runner.run import Run
from chalicelib.runner.scripts import ExitRequested, JobEnded, JobFailed, run_phase

log = logging.getLogger(__name__)

_Scripts = Literal[  # the job's settings (protocol/job_spec.JobConfiguration) the phases below run
    "installScripts",
    "beforeBuildScripts",
    "afterBuildScripts",
    "beforeTestScripts",
    "beforeDeployScripts",
    "deployScripts",
    "afterDeployScripts",
]
_BEFORE_TESTS: tuple[tuple[str, _Scripts], ...] = (
    ("install", "installScripts"),
    ("before_build", "beforeBuildScripts"),
)
_AFTER_BUILD: tuple[tuple[str, _Scripts], ...] = (
    ("after_build", "afterBuildScripts"),
    ("before_test", "beforeTestScripts"),
)
_DEPLOY: tuple[tuple[str, _Scripts], ...] = (
    ("before_deploy", "beforeDeployScripts"),
    ("deploy_script", "deployScripts"),
    ("after_deploy", "afterDeployScripts"),
)


def quarantined(run: Run, at_end: bool = False) -> bool:
    """Whether every test the job reported failed is in its project's quarantine (issue 38): its test_script's
    failure then fails nothing, and the log says which tests were quarantined (the service adds the message)."""
    try:
        names = run.client.quarantined_failures()
    except ProtocolError as error:  # a service from before quarantine, or a passing fault: the failure stands
        log.warning("job %s: the quarantine was not asked: %s", run.spec["jobId"], error)
        return False
    if not names:
        return False
    then = "the job ends as a success (its later phases did not run)" if at_end else "the job goes on"
    run.say(f"Quarantined flaky tests failed: {', '.join(names)}. They do not fail the job: {then}.")
    return True


def run_phases(run: Run) -> bool:
    """Every phase of the job; whether it succeeded (a failure raises JobFailed)."""
    config = run.configuration
    cache_entries = [str(entry.get("value")) for entry in config["cacheEntries"] if entry.get("value")]
    cache = RemoteCache(run.client)
    failure: JobFailed | None = None
    try:
        try:
            run.say(f"Build started: {run.spec['title']}, job {run.spec['jobId']} {run.spec['jobName']}")
            for warning in run.spec["warnings"]:  # what the service has to say of this job and its settings
                run.say(warning)
            stacks.apply(run)
            run_phase(run, "init", config["initScripts"])
            clone(run)
            if cache_entries:
                restore_job_cache(run, cache_entries, cache)
            for phase, key in _BEFORE_TESTS:
                run_phase(run, phase, config[key])
            _build_phase(run, config)
            run_phase(run, "before_package", config["beforePackageScripts"])
            for phase, key in _AFTER_BUILD:
                run_phase(run, phase, config[key])
            if config["testMode"] == "script":
                try:
                    run_phase(run, "test_script", config["testScripts"])
                except JobFailed as test_failure:
                    if test_failure.phase != "test_script" or not quarantined(run):
                        raise
            run_phase(run, "after_test", config["afterTestScripts"])
            _artifacts(run, config["artifacts"])
            if config["deployMode"] == "script":
                for phase, key in _DEPLOY:
                    run_phase(run, phase, config[key])
            elif config["deployMode"] == "providers" and run.spec["inlineDeployments"]:
                _inline_deploy_phase(run, config, int(run.spec["inlineDeployments"]))
        except ExitRequested:
            run.say("appveyor exit: the job ends here as a success, after on_success and on_finish.")
        run_phase(run, "on_success", config["onBuildSuccessScripts"])
    except JobFailed as error:
        failure = error
        try:
            run_phase(run, "on_failure", config["onBuildErrorScripts"], may_fail=True)
        except JobEnded:  # the shell ended: the job ends at once, failed as it is
            raise failure from None
    if failure is None and cache_entries:
        if run.spec["cacheSave"]:
            save_job_cache(run, cache_entries, cache)
        else:
            run.say(
                "The build cache is not saved for a build that gets no secure variables (a pull request's, or one "
                "started with variables by someone who may not change the project's settings)."
            )
    with contextlib.suppress(JobEnded):  # the shell ended: the job ends with the result it has
        run_phase(run, "on_finish", config["onBuildFinishScripts"], may_fail=True)
    if failure is not None:
        raise failure
    run.say("Build success")
    return True


def _inline_deploy_phase(run: Run, config: JobConfiguration, count: int) -> None:
    """before_deploy and after_deploy run where AppVeyor runs them, around its deploy phase, when an entry of
    deploy: deploys from this job; the entries themselves deliver afterwards, as the build's deployments."""
    run_phase(run, "before_deploy", config["beforeDeployScripts"])
    entries = "1 deploy: entry deploys" if count == 1 else f"{count} deploy: entries deploy"
    run.say(f"{entries} from this job once the build has succeeded, as the build's deployments.")
    run_phase(run, "after_deploy", config["afterDeployScripts"])


def _build_phase(run: Run, config: JobConfiguration) -> None:
    mode = config["buildMode"]
    if mode == "script":
        run_phase(run, "build_script", config["buildScripts"])
    elif mode == "msbuild":  # AppVeyor's default: a Windows build agent runs MSBuild, a Linux runner skips it
        run_msbuild(run)


def _artifacts(run: Run, entries: list[dict[str, Any]]) -> None:
    if not entries:
        return
    try:
        if run.windows is not None:  # a Windows build agent: by path (there is no sandbox to keep)
            from chalicelib.runner.windows.artifacts import collect

            found = collect(run.folder, entries, run.variables, run.upload_artifact, run.say)
        else:
            found = collect_artifacts(run.folder, entries, run.variables, run.upload_artifact, run.say, base=run.work)
    except NotAFolder as error:  # a build swapped it for a link: what it leads to is not the build's to hand over
        message = f"Artifacts were not collected: {error}."
        run.say(message)
        raise JobFailed(message) from error
    except TokenRevoked:
        raise
    except ProtocolError as error:  # the service did not take one, even retried: the job fails, saying which and why
        run.say(str(error))
        raise JobFailed(str(error)) from error
    pushed = {artifact.file_name for artifact in run.artifacts}
    run.artifacts.extend(artifact for artifact in found if artifact.file_name not in pushed)
