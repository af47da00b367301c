"""One attempt at a build job as its phases, and the Build Worker API its scripts call, see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from chalicelib.protocol.attempt import Attempt
from chalicelib.protocol.job_spec import JobConfiguration, JobSpec
from chalicelib.runner.artifacts import Artifact
from chalicelib.runner.container import JobContainer
from chalicelib.runner.protocol import JobClient
from chalicelib.runner.session import Session


@dataclass(frozen=True)
class SshKey:
    """The repository's SSH key, and the host key expected (None: the first seen)."""

    private_key: str
    host_key: str | None


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
    session: Session = field(init=False)  # the job's Bash, from its first script to its last

    def __post_init__(self) -> None:
        if self.container is None:
            self.session = Session(self.folder, self.say)
        else:
            self.session = Session(Path(self.container.inside(self.folder)), self.say, self.container)

    @property
    def work(self) -> Path:
        """The job's folder the runner made, which no build can replace: the build folder is pinned from there
        (runner/beneath.py) when the runner reads or writes it."""
        return self.container.work if self.container is not None else self.folder.parent

    @property
    def configuration(self) -> JobConfiguration:
        return self.spec["configuration"].copy()

    def upload_artifact(self, file_name: str, path: Path) -> int:
        """Send one file as an artifact of the job through a presigned URL; its size."""
        size = path.stat().st_size
        self.client.send_file(self.client.artifact_upload(file_name, size), path)
        return size
