"""Running one build job from its ticket: read its spec, fetch the commit, run AppVeyor's phases, report, finish.

The runner talks to the service only through the job protocol (runner/protocol.py), with the job's token: it
holds no credential of the service and imports nothing of its store or domain. It renews the job's lease every
few seconds; the same heartbeat notices a cancel, and a token that stops working (the job ended elsewhere, or
its lease was lost) stops the job.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from chalicelib.protocol.attempt import TIMED_OUT
from chalicelib.protocol.job_spec import JobConfiguration, JobSpec
from chalicelib.protocol.logstream import LogStream, SecretMask
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner import container as job_container
from chalicelib.runner import limits, stacks
from chalicelib.runner.artifacts import Artifact, collect_artifacts
from chalicelib.runner.beneath import NotAFolder, pin
from chalicelib.runner.cache import restore_cache, save_cache
from chalicelib.runner.msbuild import run_msbuild
from chalicelib.runner.outside_cache import EXCHANGE, JobShell
from chalicelib.runner.protocol import MAX_LOG_TAIL_BYTES, JobClient, ProtocolError, TokenRevoked
from chalicelib.runner.remote_cache import RemoteCache
from chalicelib.runner.run import Credentials, Run, SshKey
from chalicelib.runner.scripts import ExitRequested, JobEnded, JobFailed, run_phase
from chalicelib.runner.windows.workspace import PROJECTS_ROOT_VARIABLE, WORKSPACE_VARIABLE, build_folder, remove_tree
from chalicelib.runner.worker_api import WorkerApi
from chalicelib.runner.worker_api_id_token import ID_TOKEN_ROUTE

log = logging.getLogger(__name__)
CANCELLED = "cancelled"
LEASE_LOST = "lease lost"
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ")  # of the runner's own environment, to the scripts
_SLUG = re.compile(r"[A-Za-z0-9._-]+")


def run_ticket(ticket: Ticket, work: Path | None = None) -> str:
    """Run the job a ticket names, in ``work`` (a fresh folder when None); the result it reported."""
    client = JobClient(ticket)
    try:
        spec = client.spec()
    except TokenRevoked:
        log.warning("job %s: its token no longer works; nothing to run", ticket.job_id)
        return LEASE_LOST
    credentials = _take_clone_credentials(client, spec)
    container = job_container.JobContainer.from_ticket(ticket.container)
    preface = ticket.warnings  # where the job runs (its executor's words): the log's first lines
    if container is not None:
        return _run(client, spec, credentials, container.work, container, preface=preface)
    if work is None and os.environ.get(WORKSPACE_VARIABLE):  # a build agent on Windows made the job's folder
        work = Path(os.environ[WORKSPACE_VARIABLE])
    if work is not None:
        return _run(client, spec, credentials, work, preface=preface)
    with tempfile.TemporaryDirectory(prefix="conveyor-job-") as scratch:
        return _run(client, spec, credentials, Path(scratch), preface=preface)


def _take_clone_credentials(client: JobClient, spec: JobSpec) -> Credentials | None:
    """Take the repository's credentials before any script runs (the service hands them once), keep them in this
    process only, and mask the password. Scripts run as this process's user: it makes itself non-dumpable first,
    so they cannot read its memory (/proc/<pid>/mem, ptrace)."""
    not_dumpable()
    if not spec["source"]["credentials"] or spec["configuration"]["cloneScripts"]:
        return None  # a public repository, or clone_script fetches it: the credentials are never taken
    try:
        taken = client.clone_credentials()
    except ProtocolError as error:
        spec["warnings"].append(f"The repository's credentials could not be taken: {error}")
        return None
    if taken.get("sshPrivateKey"):
        spec["secrets"] = [*spec["secrets"], str(taken["sshPrivateKey"])]
        return SshKey(str(taken["sshPrivateKey"]), taken.get("sshHostKey"))
    # an old clone URL's https://TOKEN@host/ has the token as its user name and no password: then it is the secret
    spec["secrets"] = [*spec["secrets"], str(taken["password"] or taken["username"])]
    return (str(taken["username"]), str(taken["password"]))


def not_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0) on Linux: /proc/<pid>/mem, environ and ptrace of this process are root's only."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # 4: PR_SET_DUMPABLE


def _run(
    client: JobClient,
    spec: JobSpec,
    credentials: Credentials | None,
    work: Path,
    container: job_container.JobContainer | None = None,
    preface: tuple[str, ...] = (),
) -> str:
    windows_notes: list[str] = []
    if os.name == "nt":  # a build agent on Windows: the build folder may be C:\projects\<slug> (windows/workspace.py)
        slug = project_slug(spec)
        clone_folder = spec["configuration"]["cloneFolder"]
        folder = build_folder(work, slug, clone_folder, os.environ.get(PROJECTS_ROOT_VARIABLE), windows_notes.append)
        home = work / "temp"
        home.mkdir(exist_ok=True)
        if not folder.is_relative_to(work):
            _remove_build_folder(folder, windows_notes.append)  # a job before this one may have left it
        folder.mkdir(parents=True, exist_ok=True)
    elif container is None:
        folder, home = work / "build", work / "home"
        home.mkdir()
    else:  # the build folder is /home/appveyor/projects/<slug> in the container, as on AppVeyor's Linux images
        tempfile.tempdir = str(work / job_container.SCRATCH_FOLDER)  # the cache's archives: on the job's disk
        folder = work / job_container.PROJECTS_FOLDER / project_slug(spec)
    if os.name != "nt":
        folder.mkdir()
    limit = float(spec["timeoutSeconds"] or 3600)
    stream = LogStream(client.put_log_chunk, SecretMask(spec["secrets"]), name=f"log of {spec['jobId']}")
    run = Run(
        client=client,
        spec=spec,
        folder=folder,
        credentials=credentials,
        log=stream,
        variables={},
        deadline=time.monotonic() + limit,
        container=container,
        scratch=work if os.name == "nt" else None,
    )
    with WorkerApi(run) as worker_api:
        if os.name == "nt":
            from chalicelib.runner.windows.environment import script_environment

            run.variables.update(
                script_environment(os.environ, spec["variables"], folder, home, worker_api.url, worker_api.bin_folder)
            )
            spec["warnings"].extend(windows_notes)
        elif container is None:
            run.variables.update(_script_environment(spec, folder, home, worker_api.url, worker_api.bin_folder))
        else:
            run.variables.update(_container_environment(spec, container.inside(folder), worker_api.url))
        beat = threading.Thread(target=heartbeat, args=(run,), name="heartbeat", daemon=True)
        beat.start()
        succeeded, message = False, None
        try:
            for line in preface:
                run.say(line)
            succeeded = _phases(run)
        except JobFailed as failure:
            message = str(failure)
            # results uploaded later (on_finish, as AppVeyor's docs do it): the job ends green if quarantine says so
            if failure.phase == "test_script" and _quarantined(run, at_end=True):
                succeeded, message = True, None
        except JobEnded as ended:
            succeeded, message = ended.succeeded, ended.message
        except Exception:  # the runner's own fault: the job fails and says so, the details go to the runner's log
            log.exception("job %s: the runner failed", spec["jobId"])
            message = "The runner failed unexpectedly; the job could not finish."
            run.say(message)
        finally:
            run.past_a_limit()
            run.session.close()
            if run.windows is not None:
                run.windows.close()
            reason = run.end()
            beat.join(timeout=float(spec["heartbeatSeconds"] or 5) + 5)
    if reason == TIMED_OUT:
        succeeded, message = False, f"The job exceeded its time limit of {int(limit // 60)} min {int(limit % 60)} s."
        run.say(message)
    elif reason == limits.EXCEEDED:
        succeeded, message = False, run.limit_message
        run.say(str(message))
    elif reason == CANCELLED:
        message = run.cancel_message or "The build was cancelled."
        run.say(message)
    message = None if message is None else stream.mask(message)  # a failed command's text, as its log line is
    result = "success" if succeeded else "failed"
    if reason in (CANCELLED, LEASE_LOST):
        result = "cancelled"
    try:
        artifacts = [_artifact_json(artifact) for artifact in run.artifacts]
        if spec["logTailOnFinish"]:  # the last chunk rides on the finish
            log_end = stream.close_keeping_tail(MAX_LOG_TAIL_BYTES)
            client.finish(result, message, log_end.chunks, artifacts, log_end.tail, log_end.tail_sent)
        else:  # a service from before tails would leave it out of the log
            client.finish(result, message, stream.close(), artifacts)
    except TokenRevoked:
        return LEASE_LOST  # the service ended the job already (a lost lease): nothing more to say
    finally:
        if os.name == "nt" and not folder.is_relative_to(work):  # the agent removes the workspace, not this
            _remove_build_folder(folder, log.warning)
    return result


def project_slug(spec: JobSpec) -> str:
    """The project's slug, as the service sent it apart from the job's variables (appveyor.yml's environment: may set
    APPVEYOR_PROJECT_SLUG, and the build folder, which a Windows agent removes, is named after it); "project" from a
    service from before, or for a slug that is no single name."""
    slug = str(spec.get("projectSlug") or "")
    return slug if _SLUG.fullmatch(slug) and slug not in (".", "..") else "project"


def _remove_build_folder(folder: Path, say: Callable[[str], None]) -> None:
    """Remove a Windows job's build folder outside its workspace (``C:\\projects\\<slug>``); a file another process
    of the machine holds open is left, and said so."""
    try:
        remove_tree(folder)
    except OSError as error:
        say(f"The build folder {folder} could not be removed (what is left stays in it): {error}")


def _script_environment(spec: JobSpec, folder: Path, home: Path, api_url: str, bin_folder: Path) -> dict[str, str]:
    """What the scripts see: a few of the runner's own variables, then the job's; never the runner's others."""
    variables = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    variables.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    variables["PATH"] = f"{bin_folder}{os.pathsep}{variables['PATH']}"
    variables.update({"HOME": str(home), "TMPDIR": str(home)})
    variables.update({str(name): str(value) for name, value in spec["variables"].items()})
    variables["APPVEYOR_BUILD_FOLDER"] = str(folder)
    variables["APPVEYOR_API_URL"] = api_url
    return variables


def _container_environment(spec: JobSpec, folder: str, api_url: str) -> dict[str, str]:
    """What the scripts see in the job's container: its image's paths, then the job's variables; nothing of the
    runner's own environment."""
    variables = {"PATH": job_container.PATH, "HOME": job_container.HOME, "USER": "appveyor", "LANG": "C.UTF-8"}
    variables.update({str(name): str(value) for name, value in spec["variables"].items()})
    variables["APPVEYOR_BUILD_FOLDER"] = folder
    variables["APPVEYOR_API_URL"] = api_url
    # the service's own URL may be out of the container network's reach (make run's is on this machine's loopback):
    # the ID token is asked for through the Build Worker API, which forwards it with the same request token; only
    # when the service minted the variables (idToken), not when appveyor.yml names them
    if spec.get("idToken"):
        for name in ("ACTIONS_ID_TOKEN_REQUEST_URL", "CONVEYOR_OIDC_REQUEST_URL"):
            variables[name] = f"{api_url}{ID_TOKEN_ROUTE}?api-version=1"
    return variables


def _artifact_json(artifact: Artifact) -> dict[str, Any]:
    return {"fileName": artifact.file_name, "name": artifact.name, "type": artifact.type, "size": artifact.size}


def heartbeat(run: Run) -> None:
    """Renew the lease every few seconds; a cancel or a token that no longer works stops the job.

    The log is flushed by its own thread: a slow upload never holds up a renewal.
    """
    seconds = float(run.spec["heartbeatSeconds"] or 5)
    while run.stop_reason is None:
        run.ended.wait(seconds)
        if run.stop_reason is not None:
            return
        try:
            status, why = run.client.heartbeat()
        except TokenRevoked:
            run.stop_reason = LEASE_LOST
            run.log.abandon()
            return
        except ProtocolError:  # a blip: try again at the next beat; the lease has room for it
            log.warning("job %s: renewing the lease failed", run.spec["jobId"], exc_info=True)
            continue
        if status == "cancelling":
            run.cancel_message = why or "The build was cancelled."
            run.stop_reason = CANCELLED


# The phases, in AppVeyor's order.

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


def _quarantined(run: Run, at_end: bool = False) -> bool:
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


def _phases(run: Run) -> bool:
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
            _clone(run)
            if cache_entries:
                _restore_cache(run, cache_entries, cache)
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
                    if test_failure.phase != "test_script" or not _quarantined(run):
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
            _save_cache(run, cache_entries, cache)
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


def _job_shell(run: Run) -> JobShell:
    """The job's shell as the cache reaches it for entries outside the build folder: quiet commands, and a folder
    beside the build folder that both the runner and the shell (in the container, too) reach."""
    folder = run.folder.parent / EXCHANGE
    inside = run.container.inside(folder) if run.container is not None else str(folder)
    home = run.variables.get("HOME") or job_container.HOME

    def quietly(command: str) -> bool:
        return run.session.run(command, run.variables, run.should_stop).exit_code is not None

    return JobShell(home=home, base=run.work, folder=folder, inside=inside, run=quietly)


def _restore_cache(run: Run, entries: list[str], cache: RemoteCache) -> None:
    if run.windows is not None:  # a Windows build agent: by path, entries anywhere on the machine
        from chalicelib.runner.windows import cache as windows_cache

        windows_cache.restore(run.folder, entries, run.variables, cache, run.say)
    else:
        restore_cache(run.folder, entries, cache, run.say, base=run.work, shell=_job_shell(run))


def _save_cache(run: Run, entries: list[str], cache: RemoteCache) -> None:
    if run.windows is not None:
        from chalicelib.runner.windows import cache as windows_cache

        windows_cache.save(run.folder, entries, run.variables, cache, run.say)
    else:
        save_cache(run.folder, entries, cache, run.say, base=run.work, shell=_job_shell(run))


def _inline_deploy_phase(run: Run, config: JobConfiguration, count: int) -> None:
    """before_deploy and after_deploy run where AppVeyor runs them, around its deploy phase, when an entry of
    deploy: deploys from this job; the entries themselves deliver afterwards, as the build's deployments."""
    run_phase(run, "before_deploy", config["beforeDeployScripts"])
    entries = "1 deploy: entry deploys" if count == 1 else f"{count} deploy: entries deploy"
    run.say(f"{entries} from this job once the build has succeeded, as the build's deployments.")
    run_phase(run, "after_deploy", config["afterDeployScripts"])


def _clone(run: Run) -> None:
    config = run.configuration
    if config["cloneFolder"] and run.windows is None:  # on Windows it is the build folder, or its log said why not
        run.say(
            f"clone_folder is not used on this runner; the build folder is {run.variables['APPVEYOR_BUILD_FOLDER']}."
        )
    clone_scripts = config["cloneScripts"]
    if clone_scripts:
        if run.spec["source"]["credentials"]:
            run.say("clone_script fetches the repository: the project's clone credentials are not given to scripts.")
        run_phase(run, "clone_script", clone_scripts)
        return
    if run.windows is not None:
        _clone_with_git_for_windows(run)
        return
    from chalicelib.scm import git  # dulwich loads only where a job clones
    from chalicelib.scm.transport import SshAccess

    source = run.spec["source"]
    sha, ref, depth = source["commitId"], source["ref"], source["depth"]
    credentials, run.credentials = run.credentials, None  # used once, then dropped
    ssh = SshAccess(credentials.private_key, credentials.host_key) if isinstance(credentials, SshKey) else None
    run.say(f"Fetching commit {sha[:8]} of {ref}" + (f" (depth {depth})" if depth else ""))
    try:
        with pin(run.work, run.folder) as root:  # init's background processes may have swapped it for a link
            git.checkout(
                source["url"],
                ref,
                sha,
                root.path,
                depth=int(depth) if depth else None,
                credentials=credentials if isinstance(credentials, tuple) else None,
                ssh=ssh,
            )
    except NotAFolder as error:
        message = f"The source was not fetched: {error}."
        run.say(message)
        raise JobFailed(message) from error
    except git.SourceError as error:
        run.say(str(error))
        raise JobFailed(str(error)) from error


def _clone_with_git_for_windows(run: Run) -> None:
    """On a Windows build agent: the machine's Git for Windows fetches the commit (runner/windows/git.py)."""
    from chalicelib.runner.windows.git import GitFailed, fetch_source

    source = run.spec["source"]
    credentials, run.credentials = run.credentials, None  # used once, then dropped
    key = (credentials.private_key, credentials.host_key) if isinstance(credentials, SshKey) else None
    depth = f" (depth {source['depth']})" if source["depth"] else ""
    run.say(f"Fetching commit {source['commitId'][:8]} of {source['ref']}{depth} with git")
    login = credentials if isinstance(credentials, tuple) else None
    try:
        # the agent's environment, not the job's variables: a pull request's appveyor.yml writes those
        fetch_source(source, login, key, run.folder, run.work / "git", run.say)
    except GitFailed as error:
        run.say(str(error))
        raise JobFailed(str(error)) from error


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


def main() -> int:
    """``python -m chalicelib.runner``: run the job of the ticket on standard input; 0 once the job is finished
    (or was ended by the service), else the exception's exit code: its executor then ends the job itself."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    ticket = Ticket.from_json(sys.stdin.read())
    result = run_ticket(ticket)
    log.info("job %s ended: %s", ticket.job_id, result)  # what whoever started the runner sees (an agent's terminal)
    return 0
