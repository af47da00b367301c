"""Running one build job: claim it, fetch the commit, run AppVeyor's phases, store log and artifacts, end it.

The job holds a lease while it runs and renews it every few seconds; the same heartbeat notices a
cancel. A runner that dies leaves a lease that runs out, and the sweeper ends the job.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chalicelib.config import settings
from chalicelib.domain import progress
from chalicelib.domain.repositories import clone_url
from chalicelib.domain.status import Event, Status
from chalicelib.runner import shell
from chalicelib.runner.artifacts import collect_artifacts
from chalicelib.runner.cache import restore_cache, save_cache
from chalicelib.runner.environment import job_environment
from chalicelib.runner.logstream import LogStream, SecretMask
from chalicelib.scm import git
from chalicelib.store import blobs
from chalicelib.store import builds as store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store
from chalicelib.store.builds import Build
from chalicelib.store.jobs import Job
from chalicelib.store.projects import Project
from chalicelib.wire.time import timestamp

log = logging.getLogger(__name__)
CANCELLED = "cancelled"
LEASE_LOST = "lease lost"
TIMED_OUT = "timed out"
_SAFETY_SECONDS = 30  # left to store the log and end the job before the function itself is stopped


class JobFailed(Exception):
    """A phase failed; the message says where and why."""


@dataclass
class Run:
    """One attempt at a job, as its phases see it."""

    project: Project
    build: Build
    job: Job
    folder: Path
    log: LogStream
    variables: dict[str, str]
    deadline: float
    stop_reason: str | None = None
    messages: list[str] = field(default_factory=list)
    ended: threading.Event = field(default_factory=threading.Event)  # wakes the heartbeat when the work is done

    def end(self) -> str | None:
        """The work is over: the heartbeat stops now (not at its next beat). Why it stopped early, if it did."""
        reason = self.stop_reason
        self.stop_reason = reason or "finished"
        self.ended.set()
        return reason

    def should_stop(self) -> str | None:
        if self.stop_reason is None and time.monotonic() > self.deadline:
            self.stop_reason = TIMED_OUT
        return self.stop_reason

    def say(self, line: str) -> None:
        self.log.write(line)


def run_job(job_id: str, remaining_seconds: float | None = None) -> None:
    """Run the job if this delivery wins its claim; a duplicate or a cancelled job returns at once."""
    config = settings()
    job = job_store.get_job(job_id)
    if job is None or not job_store.claim_job(job_id, int(time.time()) + config.lease_seconds):
        return
    build = store.get_build(job.project_id, job.build_id)
    project = project_store.get_project_by_id(job.account_id, job.project_id)
    if build is None or project is None:  # deleted meanwhile
        progress.move(job, Event.FAIL, "The build was deleted.")
        return
    progress.refresh_build(build.project_id, build.build_id)
    limit = float(config.job_timeout_seconds)
    if remaining_seconds is not None:
        limit = min(limit, max(remaining_seconds - _SAFETY_SECONDS, 1))
    with tempfile.TemporaryDirectory(prefix="conveyor-job-") as work:
        _run(project, build, job, Path(work), time.monotonic() + limit, limit)


def _run(project: Project, build: Build, job: Job, work: Path, deadline: float, limit: float) -> None:
    folder, home = work / "build", work / "home"
    folder.mkdir()
    home.mkdir()
    warnings: list[str] = []
    environment = job_environment(project, build, job, folder, home, warnings.append)
    stream = LogStream(
        blobs.job_prefix(build.account_id, build.project_id, build.build_id, job.job_id),
        SecretMask(environment.secrets),
    )
    run = Run(project, build, job, folder, stream, environment.variables, deadline)
    beat = threading.Thread(target=heartbeat, args=(run,), name=f"heartbeat-{job.job_id}", daemon=True)
    beat.start()
    succeeded, message = False, None
    artifacts: list[dict[str, Any]] = []
    try:
        for warning in warnings:
            run.say(warning)
        succeeded, artifacts = _phases(run)
    except JobFailed as failure:
        message = str(failure)
    except Exception:  # the runner's own fault: the job fails and says so, the details go to the service log
        log.exception("job %s: the runner failed", job.job_id)
        message = "The runner failed unexpectedly; the job could not finish."
        run.say(message)
    finally:
        reason = run.end()
        beat.join(timeout=settings().heartbeat_seconds + 5)
    if reason == TIMED_OUT:
        succeeded, message = False, f"The job exceeded its time limit of {int(limit // 60)} min {int(limit % 60)} s."
        run.say(message)
    elif reason == CANCELLED:
        run.say("The build was cancelled.")
    try:
        stream.close()
    except Exception:  # the job's result stands; its log stays in chunks, readable as while it ran
        log.exception("job %s: the finished log could not be stored", job.job_id)
    counts = {"messagesCount": len(run.messages), "artifactsCount": len(artifacts)}
    end_job(run.job, reason, succeeded, message, counts, artifacts)
    if store.get_build(build.project_id, build.build_id) is None:  # deleted while it ran: leave nothing behind
        blobs.delete_prefix(blobs.job_prefix(build.account_id, build.project_id, build.build_id, job.job_id))


def end_job(
    job: Job,
    reason: str | None,
    succeeded: bool,
    message: str | None,
    counts: dict[str, int],
    artifacts: list[dict[str, Any]],
) -> None:
    """Record how a run ended: as the runner saw it, unless a cancel or a lost lease decided already."""
    if reason == LEASE_LOST:
        return  # the sweeper ended the job already
    if reason == CANCELLED:
        fresh = job_store.get_job(job.job_id) or job
        progress.move(fresh, Event.STOPPED, "Cancelled by a user.", counts=counts, artifacts=artifacts)
        progress.refresh(job)
        return
    progress.finish_job(job_store.get_job(job.job_id) or job, succeeded, message, counts=counts, artifacts=artifacts)


def heartbeat(run: Run) -> None:
    """Renew the lease every few seconds; a cancel or a lost lease stops the job."""
    config = settings()
    while run.stop_reason is None:
        run.ended.wait(config.heartbeat_seconds)
        if run.stop_reason is not None:
            return
        try:
            status = job_store.renew_lease(run.job.job_id, int(time.time()) + config.lease_seconds)
        except Exception:  # a blip of DynamoDB: try again at the next beat; the lease has room for it
            log.warning("job %s: renewing the lease failed", run.job.job_id, exc_info=True)
            continue
        if status is None:
            run.stop_reason = LEASE_LOST
        elif status == Status.CANCELLING:
            run.stop_reason = CANCELLED
        try:
            run.log.flush()
        except Exception:
            log.warning("job %s: flushing the log failed", run.job.job_id, exc_info=True)


# The phases, in AppVeyor's order.

_BEFORE_TESTS = (
    ("install", "installScripts"),
    ("before_build", "beforeBuildScripts"),
)
_AFTER_BUILD = (
    ("after_build", "afterBuildScripts"),
    ("before_test", "beforeTestScripts"),
)
_DEPLOY = (
    ("before_deploy", "beforeDeployScripts"),
    ("deploy_script", "deployScripts"),
    ("after_deploy", "afterDeployScripts"),
)


def _phases(run: Run) -> tuple[bool, list[dict[str, Any]]]:
    """Every phase of the job; returns whether it succeeded and its artifacts."""
    config = run.build.configuration
    cache_entries = [str(entry.get("value")) for entry in config.get("cacheEntries", []) if entry.get("value")]
    cache_prefix = f"{blobs.project_cache_prefix(run.build.account_id, run.build.project_id)}{_cache_folder(run.job)}/"
    artifacts: list[dict[str, Any]] = []
    failure: JobFailed | None = None
    try:
        run.say(f"Build started: {run.project.name} {run.build.version}, job {run.job.job_id} {run.job.name}".rstrip())
        _scripts(run, "init", config.get("initScripts", []))
        _clone(run)
        if cache_entries:
            restore_cache(run.folder, cache_entries, cache_prefix, run.say)
        for phase, key in _BEFORE_TESTS:
            _scripts(run, phase, config.get(key, []))
        _build_phase(run, config)
        for phase, key in _AFTER_BUILD:
            _scripts(run, phase, config.get(key, []))
        if config.get("testMode") == "script":
            _scripts(run, "test_script", config.get("testScripts", []))
        _scripts(run, "after_test", config.get("afterTestScripts", []))
        artifacts = _artifacts(run, config.get("artifacts", []))
        if config.get("deployMode") == "script":
            for phase, key in _DEPLOY:
                _scripts(run, phase, config.get(key, []))
        _scripts(run, "on_success", config.get("onBuildSuccessScripts", []))
    except JobFailed as error:
        failure = error
        _scripts(run, "on_failure", config.get("onBuildErrorScripts", []), may_fail=True)
    if failure is None and cache_entries and run.build.pull_request is None:
        save_cache(run.folder, cache_entries, cache_prefix, run.say)
    _scripts(run, "on_finish", config.get("onBuildFinishScripts", []), may_fail=True)
    if failure is not None:
        raise failure
    run.say("Build success")
    return True, artifacts


def _clone(run: Run) -> None:
    config = run.build.configuration
    if config.get("cloneFolder"):
        run.say(f"clone_folder is not used on this runner; the build folder is {run.folder}.")
    clone_scripts = config.get("cloneScripts", [])
    if clone_scripts:
        _scripts(run, "clone_script", clone_scripts)
        return
    sha = run.build.commit["commitId"]
    depth = config.get("cloneDepth") or (1 if config.get("shallowClone") else None)
    url = clone_url(run.project.repository_type, run.project.repository_name)
    run.say(f"Fetching commit {sha[:8]} of {run.build.ref}" + (f" (depth {depth})" if depth else ""))
    try:
        git.checkout(url, run.build.ref, sha, run.folder, depth=int(depth) if depth else None)
    except git.SourceError as error:
        run.say(str(error))
        raise JobFailed(str(error)) from error


def _build_phase(run: Run, config: dict[str, Any]) -> None:
    mode = config.get("buildMode")
    if mode == "script":
        _scripts(run, "build_script", config.get("buildScripts", []))
    elif mode == "msbuild":
        run.say("MSBuild is not available on this Linux runner: the build phase is skipped (use build_script).")


def _artifacts(run: Run, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not entries:
        return []
    job_prefix = blobs.job_prefix(run.build.account_id, run.build.project_id, run.build.build_id, run.job.job_id)
    found = collect_artifacts(run.folder, entries, run.variables, job_prefix, run.say)
    return [
        {
            "fileName": artifact.file_name,
            "name": artifact.name,
            "type": artifact.type,
            "size": artifact.size,
            "created": timestamp(artifact.created),
        }
        for artifact in found
    ]


def _scripts(run: Run, phase: str, scripts: list[dict[str, Any]], may_fail: bool = False) -> None:
    """Run a phase's scripts in order; the first that fails fails the job (unless ``may_fail``)."""
    if not scripts or (may_fail and run.stop_reason is not None):
        return
    run.say(f"Running {phase} scripts")
    for script in scripts:
        for line in str(script.get("script") or "").splitlines() or [""]:
            run.say(f"$ {line}")
        command = shell.command_for(script)
        if isinstance(command, str):
            outcome = shell.Outcome(None, command)
            run.say(command)
        else:
            outcome = shell.run(command, run.folder, run.variables, run.say, run.should_stop)
        if outcome.succeeded:
            continue
        if run.stop_reason is not None:
            raise JobFailed(f"The job was stopped in {phase}: {run.stop_reason}.")
        message = f"Command exited with code {outcome.exit_code}" if outcome.exit_code is not None else outcome.stopped
        if may_fail:
            run.say(f"{message} (in {phase}; the job's result stands)")
            continue
        run.messages.append(str(message))
        run.say(str(message))
        raise JobFailed(f"{message} in {phase}.")


def _cache_folder(job: Job) -> str:
    """Each matrix job keeps its own cache, found again by its name in the next build."""
    return hashlib.sha256(job.name.encode()).hexdigest()[:16]
