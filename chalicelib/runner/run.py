"""One attempt at a build job as its phases, and the Build Worker API its scripts call, see it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from chalicelib.protocol.attempt import Attempt
from chalicelib.protocol.job_spec import JobConfiguration, JobSpec
from chalicelib.runner.artifacts import Artifact, ArtifactRefused
from chalicelib.runner.container import JobContainer
from chalicelib.runner.limits import EXCEEDED, LimitWatch
from chalicelib.runner.protocol import JobClient, ProtocolError, TokenRevoked
from chalicelib.runner.session import Session
from chalicelib.runner.windows.cmd_session import WindowsSession


@dataclass(frozen=True)
class SshKey:
    """The repository's SSH key, and the host key expected (None: the first seen)."""

    private_key: str
    host_key: str | None


MAX_ARTIFACTS_BYTES = 5 * 1024**3  # a job's artifacts in all (the service takes files of up to 5 GiB each)
MAX_ARTIFACT_COUNT = 1000  # a job's artifacts, at most (the service's own limit)

# the repository's credentials, taken before any script runs: a user name and password, or an SSH key
Credentials = tuple[str, str] | SshKey


@dataclass(kw_only=True)
class Run(Attempt):
    """One attempt at a build job, as its phases see it."""

    client: JobClient
    spec: JobSpec
    folder: Path
    credentials: Credentials | None = None  # the repository's: the fetch takes them, then they are dropped
    messages: list[str] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    exit_requested: bool = False  # ``appveyor exit`` was called: the job skips to on_success and on_finish
    container: JobContainer | None = None  # where the scripts run (None: beside the runner)
    scratch: Path | None = None  # the runner's own folder of the job, where the build folder is elsewhere (Windows)
    session: Session = field(init=False)  # the job's Bash, from its first script to its last
    cancel_message: str | None = None  # who cancelled the job, or why, as the service said it
    has_powershell: bool | None = None  # whether the job's shell finds pwsh (None: not asked yet)
    limit_message: str | None = None  # which limit the job went past, once it has (stop_reason EXCEEDED)
    _watch: LimitWatch | None = field(init=False, default=None)
    _uploaded: dict[str, int] = field(init=False, default_factory=dict)  # each artifact's size, by its file name
    windows: WindowsSession | None = field(init=False, default=None)  # on Windows: its cmd lines and PowerShell

    def __post_init__(self) -> None:
        if os.name == "nt":
            self.windows = WindowsSession(self.folder, self.say, self.work / "commands")
        if self.container is None:
            self.session = Session(self.folder, self.output)
        else:
            self.session = Session(Path(self.container.inside(self.folder)), self.output, self.container)
            if self.container.limits is not None:
                self._watch = LimitWatch(self.container.limits, self.container.work)

    def should_stop(self) -> str | None:
        """Why the work must stop now: a cancel, a lost lease, the time limit, or a limit of its container."""
        reason = super().should_stop()
        return reason if reason is not None else self.past_a_limit()

    def past_a_limit(self) -> str | None:
        """EXCEEDED once the job went past a limit of its container (``limit_message`` says which), else None: asked
        after each command, and as the job ends (a checkout that filled the disk fails saying so)."""
        if self.stop_reason is None and self._watch is not None:
            self.limit_message = self._watch.exceeded()
            if self.limit_message is not None:
                self.stop_reason = EXCEEDED
        return self.stop_reason if self.stop_reason == EXCEEDED else None

    @property
    def work(self) -> Path:
        """The job's folder the runner made, which no build can replace: the build folder is pinned from there
        (runner/beneath.py) when the runner reads or writes it."""
        if self.container is not None:
            return self.container.work
        return self.scratch if self.scratch is not None else self.folder.parent

    @property
    def configuration(self) -> JobConfiguration:
        return self.spec["configuration"].copy()

    def upload_artifact(self, file_name: str, path: Path) -> int:
        """Send one file as an artifact of the job through a presigned URL; its size. ArtifactRefused past the
        job's limits: MAX_ARTIFACTS_BYTES in all, MAX_ARTIFACT_COUNT files; ProtocolError, naming the file, when
        the service or the store did not take it."""
        size = path.stat().st_size
        sent = sum(sent_size for name, sent_size in self._uploaded.items() if name != file_name)
        if sent + size > MAX_ARTIFACTS_BYTES:
            raise ArtifactRefused(
                f"Artifact {file_name} ({size:,} bytes) was not uploaded: a job's artifacts hold "
                f"{MAX_ARTIFACTS_BYTES // 1024**3} GiB in all, and this job's have {sent:,} bytes."
            )
        if len({*self._uploaded, file_name}) > MAX_ARTIFACT_COUNT:
            raise ArtifactRefused(f"Artifact {file_name} was not uploaded: a job has {MAX_ARTIFACT_COUNT} at most.")
        try:
            self.client.send_file(self.client.artifact_upload(file_name, size), path)
        except TokenRevoked:
            raise
        except ProtocolError as error:  # retried already: the file is named, for the log and the job's message
            raise ProtocolError(f"Artifact {file_name} was not uploaded: {error}", error.status) from error
        self._uploaded[file_name] = size  # a name sent again replaces its file
        return size
