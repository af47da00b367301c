"""Running one build job from its ticket: read its spec, fetch the commit, run AppVeyor's phases, report, finish.

The runner talks to the service only through the job protocol (runner/protocol.py), with the job's token: it
holds no credential of the service and imports nothing of its store or domain. It renews the job's lease every
few seconds; the same heartbeat notices a cancel, and a token that stops working (the job ended elsewhere, or
its lease was lost) stops the job.

The phases it runs are in job_phases.py (the fetch in job_source.py, the cache in job_cache.py), what the scripts
see in job_environment.py, the Build Worker API they call in worker_api.py.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from chalicelib.protocol.attempt import TIMED_OUT
from chalicelib.protocol.job_spec import JobSpec
from chalicelib.protocol.logstream import LogStream, SecretMask
from chalicelib.protocol.ticket import Ticket
from chalicelib.runner import container as job_container
from chalicelib.runner import job_environment, limits
from chalicelib.runner.artifacts import Artifact
from chalicelib.runner.job_phases import quarantined, run_phases
from chalicelib.runner.job_source import take_clone_credentials
from chalicelib.runner.protocol import (
    CANCELLED_MESSAGE,
    MAX_LOG_TAIL_BYTES,
    JobClient,
    ProtocolError,
    TokenRevoked,
    cancel_of,
)
from chalicelib.runner.run import Credentials, Run
from chalicelib.runner.scripts import JobEnded, JobFailed
from chalicelib.runner.windows.workspace import PROJECTS_ROOT_VARIABLE, WORKSPACE_VARIABLE, build_folder
from chalicelib.runner.worker_api import WorkerApi

log = logging.getLogger(__name__)
CANCELLED = "cancelled"
LEASE_LOST = "lease lost"


def run_ticket(ticket: Ticket, work: Path | None = None) -> str:
    """Run the job a ticket names, in ``work`` (a fresh folder when None); the result it reported."""
    client = JobClient(ticket)
    try:
        spec = client.spec()
    except TokenRevoked:
        log.warning("job %s: its token no longer works; nothing to run", ticket.job_id)
        return LEASE_LOST
    credentials = take_clone_credentials(client, spec)
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
        slug = job_environment.project_slug(spec)
        clone_folder = spec["configuration"]["cloneFolder"]
        folder = build_folder(work, slug, clone_folder, os.environ.get(PROJECTS_ROOT_VARIABLE), windows_notes.append)
        home = work / "temp"
        home.mkdir(exist_ok=True)
        if not folder.is_relative_to(work):
            job_environment.remove_build_folder(folder, windows_notes.append)  # a job before this one may have left it
        folder.mkdir(parents=True, exist_ok=True)
    elif container is None:
        folder, home = work / "build", work / "home"
        home.mkdir()
    else:  # the build folder is /home/appveyor/projects/<slug> in the container, as on AppVeyor's Linux images
        tempfile.tempdir = str(work / job_container.SCRATCH_FOLDER)  # the cache's archives: on the job's disk
        folder = work / job_container.PROJECTS_FOLDER / job_environment.project_slug(spec)
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
            run.variables.update(
                job_environment.script_environment(spec, folder, home, worker_api.url, worker_api.bin_folder)
            )
        else:
            run.variables.update(job_environment.container_environment(spec, container.inside(folder), worker_api.url))
        beat = threading.Thread(target=heartbeat, args=(run,), name="heartbeat", daemon=True)
        beat.start()
        succeeded, message = False, None
        try:
            for line in preface:
                run.say(line)
            succeeded = run_phases(run)
        except JobFailed as failure:
            message = str(failure)
            # results uploaded later (on_finish, as AppVeyor's docs do it): the job ends green if quarantine says so
            if failure.phase == "test_script" and quarantined(run, at_end=True):
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
        message = run.cancel_message or CANCELLED_MESSAGE
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
            job_environment.remove_build_folder(folder, log.warning)
    return result


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
        if (cancel := cancel_of(status, why)) is not None:
            run.cancel_message = cancel
            run.stop_reason = CANCELLED


def main() -> int:
    """``python -m chalicelib.runner``: run the job of the ticket on standard input; 0 once the job is finished
    (or was ended by the service), else the exception's exit code: its executor then ends the job itself."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    ticket = Ticket.from_json(sys.stdin.read())
    result = run_ticket(ticket)
    log.info("job %s ended: %s", ticket.job_id, result)  # what whoever started the runner sees (an agent's terminal)
    return 0
