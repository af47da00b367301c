"""What every deployment provider is handed, how it reads its artifacts, and the two ways it can end early."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

from chalicelib.store.artifacts import artifact_url, open_artifact_stream

# Receivers may fetch artifacts a while after they were told of them: AppVeyor's agents get 10 minutes for ARTIFACT_URL.
ARTIFACT_URL_SECONDS = 600
_SEPARATORS = re.compile(r"[\s,]+")
_FALSE = ("", "false", "0", "no", "off")


@dataclass(frozen=True)
class DeployArtifact:
    """One artifact of the deployed build, where it lives in the data bucket."""

    file_name: str  # e.g. "out/app.zip"
    name: str  # the artifact's deployment name
    type: str
    size: int
    job_prefix: str  # store.artifacts.artifact_key(job_prefix, file_name) is its object

    def description(self) -> dict[str, Any]:
        """The artifact as webhooks and agents are told of it, with a download URL valid for 10 minutes."""
        url = artifact_url(self.job_prefix, self.file_name, ARTIFACT_URL_SECONDS)
        return {"fileName": self.file_name, "name": self.name, "type": self.type, "size": self.size, "url": url}


@dataclass(frozen=True)
class Delivery:
    """Everything a provider needs to deliver one deployment."""

    settings: dict[str, str]  # provider settings by name, secrets decrypted, $(NAME) already substituted
    artifacts: list[DeployArtifact]  # every artifact of the deployed build (or of the chosen job)
    variables: dict[str, str]  # the deployment's variables (APPVEYOR_* of the build, environment's, request's)
    context: dict[str, Any]  # account, project, build, job, commit JSON for webhook bodies (already wire-shaped)
    log: Callable[[str], None]  # one log line (the caller masks secrets)
    should_stop: Callable[[], bool]  # True once the deployment was stopped: return soon, raising DeployStopped

    def setting(self, name: str) -> str:
        """A provider setting, stripped; empty when not set."""
        return (self.settings.get(name) or "").strip()

    def flag(self, name: str) -> bool:
        """A true/false provider setting; anything but an empty or false-like value is true."""
        return self.setting(name).lower() not in _FALSE

    def stop_if_asked(self) -> None:
        """Raise DeployStopped once the deployment was stopped."""
        if self.should_stop():
            raise DeployStopped()

    def warn_unsupported(self, names: Iterable[str]) -> None:
        """Say which of the provider's AppVeyor settings are set but not honoured, rather than ignore them quietly."""
        unsupported = [name for name in names if self.flag(name)]
        if unsupported:
            self.log(f"Conveyor does not support these settings, so they are ignored: {', '.join(unsupported)}")


class DeployFailed(Exception):
    """The deployment failed; str() is the user-facing reason."""


class DeployStopped(Exception):
    """The deployment was stopped by a user."""


def selected(artifacts: list[DeployArtifact], setting: str | None) -> list[DeployArtifact]:
    """The artifacts a provider's `artifact` setting names (comma/space separated names or file names; empty = all).

    A name that matches no artifact fails the deployment: delivering less than asked would pass unnoticed.
    """
    if not setting or not setting.strip():
        return list(artifacts)
    wanted: set[str] = set()
    for part in (part.strip() for part in setting.split(",")):
        if _matches(artifacts, part):
            wanted.add(part)  # a name may itself contain spaces
            continue
        for word in _SEPARATORS.split(part):
            if word and not _matches(artifacts, word):
                raise DeployFailed(f"No artifact of the build is named {word!r} (the provider's artifact setting).")
            wanted.add(word)
    return [artifact for artifact in artifacts if wanted & {artifact.name, artifact.file_name}]


def _matches(artifacts: list[DeployArtifact], name: str) -> bool:
    return any(name in (artifact.name, artifact.file_name) for artifact in artifacts)


@contextmanager
def open_artifact(artifact: DeployArtifact) -> Iterator[BinaryIO]:
    """The artifact's bytes, streamed from the data bucket (never whole in memory); DeployFailed if it is gone."""
    try:
        stream = open_artifact_stream(artifact.job_prefix, artifact.file_name)
    except FileNotFoundError:
        raise DeployFailed(f"The artifact {artifact.file_name} is no longer stored: it cannot be deployed.") from None
    try:
        yield cast(BinaryIO, stream)
    finally:
        stream.close()
