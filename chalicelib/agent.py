"""``conveyor agent``: a deployment agent for one Agent environment, run on the machine deployed to; with
``--builds``, a build agent (``BuildJobAgent``) that runs the account's build jobs of the images it is registered for.

A deployment agent asks the service for the environment's next deployment job, downloads the artifacts into
``--folder`` (keeping their paths), runs the environment's ``deploy_script`` setting there with
``/bin/sh`` and the deployment's variables, and reports its output and result. While the script runs
it sends a heartbeat every few seconds; a stopped deployment kills the script's process group.
Standard library only: the deployment agent needs nothing of the service's own dependencies.

A build agent asks for a job of its images, gets the job's ticket (as every executor hands it: the API's URL,
the job id, its job token) and runs the one runner program with it, in a sandbox of its own (runner/sandbox.py), or
on Windows, where there is none, in a Job Object and a workspace of the job's own (runner/windows/host.py):
the runner streams the log, uploads artifacts and heeds a cancel through the job protocol. The agent's key never
reaches the job. Killed, the agent takes its runner with it, and the job ends when its lease does.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from chalicelib.protocol.ticket import Ticket
from chalicelib.runner import sandbox, shell
from chalicelib.runner.job_source import not_dumpable

POLL_SECONDS = 2.0
HEARTBEAT_SECONDS = 3.0
BUSY_SECONDS = 20.0  # how often a build agent running a job says so (it stays listed as connected)
UNSAFE_OPTION = "Start the agent with --unsafe-no-sandbox"
RETRY_SECONDS = 10.0  # before a build agent asks again after the service could not answer
JOB_LIMIT_SECONDS = 36 * 3600  # the runner ends a job at the job's own limit: this only bounds a runner that hangs
REPORT_LINES = 200
WINDOWS_NOTICE = (
    "No sandbox on Windows: jobs run as this agent's user and reach what it reaches, this machine's files and "
    'network included. Pull request builds come only to an agent registered with "pullRequests": true; run one '
    "agent per throwaway machine for code the team does not trust (docs/executors.md)."
)


class AgentError(Exception):
    """The service refused the agent or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status of a refusal; None when the service could not be reached


@dataclass
class Agent:
    url: str
    key: str
    folder: Path
    name: str = field(default_factory=socket.gethostname)
    say: Callable[[str], None] = print

    def call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """POST to the agent API; the JSON answer, or None for 204."""
        request = urllib.request.Request(
            f"{self.url.rstrip('/')}/api/agent{path}",
            data=json.dumps(body or {}).encode(),
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            message = f"{path}: HTTP {error.code} {error.read().decode(errors='replace')[:200]}"
            raise AgentError(message, error.code) from error
        except OSError as error:
            raise AgentError(f"{path}: {error}") from error
        return json.loads(payload) if payload else None

    def run(self, once: bool = False) -> None:
        """Take and run jobs until stopped (or, with ``once``, until one job has run)."""
        while True:
            job = self.call("/jobs/next", {"name": self.name})
            if job is None:
                if once:
                    return
                time.sleep(POLL_SECONDS)
                continue
            self.say(f"Deployment {job['deploymentId']}: job {job['jobId']}")
            self.deploy(job)
            if once:
                return

    def deploy(self, job: dict[str, Any]) -> None:
        """Run one job and report it; any failure of ours is reported as the job's failure."""
        report = _Report(self, job["jobId"])
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(job["jobId"], stop), daemon=True)
        beat.start()
        try:
            succeeded, message = self._deploy(job, report, stop)
        except Exception as error:  # noqa: BLE001 - the service must hear about any failure
            succeeded, message = False, f"The agent failed: {error}"
            report.line(message)
        finally:
            beat_stopped = stop.is_set()
            stop.set()
            beat.join(timeout=HEARTBEAT_SECONDS + 1)
        report.flush()
        if beat_stopped and not succeeded:
            message = "Stopped."
        self.call(f"/jobs/{job['jobId']}/result", {"success": succeeded, "message": message})

    def _deploy(self, job: dict[str, Any], report: _Report, stop: threading.Event) -> tuple[bool, str | None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        for artifact in job["artifacts"]:
            target = self.folder.joinpath(*PurePosixPath(artifact["fileName"]).parts)
            if not target.resolve().is_relative_to(self.folder.resolve()):
                report.line(f"Skipped artifact {artifact['fileName']}: it would land outside the folder.")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with urllib.request.urlopen(artifact["url"], timeout=300) as source, target.open("wb") as sink:
                shutil.copyfileobj(source, sink)
            report.line(f"Downloaded {artifact['fileName']} ({artifact['size']} bytes) to {target}")
        script = (job.get("settings") or {}).get("deploy_script", "")
        if not script.strip():
            return True, None
        report.line(f"$ {script}")
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **job["variables"]}
        environment["APPVEYOR_BUILD_FOLDER"] = str(self.folder)
        outcome = shell.run(
            ["/bin/sh", "-c", script],
            self.folder,
            environment,
            report.line,
            lambda: "stopped" if stop.is_set() else None,
        )
        if outcome.succeeded:
            return True, None
        message = f"deploy_script exited with code {outcome.exit_code}" if outcome.exit_code is not None else "Stopped."
        report.line(message)
        return False, message

    def _heartbeat(self, job_id: str, stop: threading.Event) -> None:
        while not stop.wait(HEARTBEAT_SECONDS):
            try:
                if self.call(f"/jobs/{job_id}/heartbeat")["status"] == "cancelling":
                    stop.set()
            except AgentError:
                stop.set()  # the job is gone or no longer ours


class _Report:
    """Log lines on their way to the service, sent in batches."""

    def __init__(self, agent: Agent, job_id: str) -> None:
        self.agent, self.job_id = agent, job_id
        self.lines: list[str] = []
        self.lock = threading.Lock()

    def line(self, text: str) -> None:
        with self.lock:
            self.lines.append(text)
            full = len(self.lines) >= REPORT_LINES
        if full:
            self.flush()

    def flush(self) -> None:
        with self.lock:
            lines, self.lines = self.lines, []
        if lines:
            self.agent.call(f"/jobs/{self.job_id}/log", {"lines": lines})


@dataclass
class BuildJobAgent:
    """A build agent: takes the account's jobs of the images it is registered for and runs them here."""

    url: str
    key: str
    unsafe_no_sandbox: bool = False  # run jobs without a sandbox where none can be made (every log says so)
    say: Callable[[str], None] = print
    workspaces: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "conveyor-jobs")  # Windows
    projects_root: str | None = None  # on Windows, where build folders may go (AppVeyor's C:\projects)

    def __post_init__(self) -> None:
        self._service = Agent(self.url, self.key, Path("."), say=self.say)

    def run(self, once: bool = False) -> None:
        """Take and run jobs until stopped (or, with ``once``, until one job has run)."""
        windows = os.name == "nt"
        if windows:
            self.say(WINDOWS_NOTICE)
            asking: dict[str, Any] = {"sandboxed": False, "platform": "windows"}
        else:
            warning = sandbox.check(self.unsafe_no_sandbox, UNSAFE_OPTION)  # none, no unsafe option: refuse to start
            if warning:
                self.say(warning)
            not_dumpable()  # its key is in its environment: a job without a sandbox runs as its user
            asking = {"sandboxed": not warning}
        while True:
            try:
                answer = self._service.call("/builds/next", asking)
            except AgentError as error:
                if error.status in (401, 403):  # a wrong key, or the agent was deleted: asking again changes nothing
                    raise
                self.say(f"The service could not answer, asking again in {RETRY_SECONDS:.0f} s: {error}")
                time.sleep(RETRY_SECONDS)
                continue
            if answer is None:
                if once:
                    return
                time.sleep(POLL_SECONDS)
                continue
            ticket = Ticket.from_json(json.dumps(answer))
            self.say(f"Job {ticket.job_id}: running")
            self.say(f"Job {ticket.job_id}: {_ending(self.run_job(ticket))}")
            if once:
                return

    def run_job(self, ticket: Ticket) -> int:
        """Run one job's runner in a sandbox and wait for it; its exit code."""
        done = threading.Event()
        busy = threading.Thread(target=self._busy, args=(done,), daemon=True)
        busy.start()
        try:
            if os.name == "nt":
                from chalicelib.runner.windows.host import run_runner

                return run_runner(ticket, JOB_LIMIT_SECONDS, self.workspaces, self.projects_root)
            return sandbox.run(ticket, self.unsafe_no_sandbox, JOB_LIMIT_SECONDS)
        finally:
            done.set()
            busy.join(timeout=5)

    def _busy(self, done: threading.Event) -> None:
        while not done.wait(BUSY_SECONDS):
            try:
                self._service.call("/builds/busy")
            except AgentError as error:
                self.say(f"The service could not be told this agent is busy: {error}")


def _ending(exit_code: int) -> str:
    """What a runner's exit code says about its job: 0 is any job it ended (a failed one too), its result reported
    to the service and logged by the runner just above; anything else, a runner that stopped before it could."""
    if exit_code == 0:
        return "the runner ended it and reported its result to the service (the runner's line above says which)"
    return (
        f"the runner stopped (exit code {exit_code}) before it reported a result; the service fails the job when "
        "its lease ends"
    )
