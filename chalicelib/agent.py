"""``conveyor agent``: a deployment agent for one Agent environment, run on the machine deployed to.

It asks the service for the environment's next deployment job, downloads the artifacts into
``--folder`` (keeping their paths), runs the environment's ``deploy_script`` setting there with
``/bin/sh`` and the deployment's variables, and reports its output and result. While the script runs
it sends a heartbeat every few seconds; a stopped deployment kills the script's process group.
Standard library only: the agent needs nothing of the service's own dependencies.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from chalicelib.runner import shell

POLL_SECONDS = 2.0
HEARTBEAT_SECONDS = 3.0
REPORT_LINES = 200


class AgentError(Exception):
    """The service refused the agent or could not be reached."""


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
            raise AgentError(f"{path}: HTTP {error.code} {error.read().decode(errors='replace')[:200]}") from error
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
