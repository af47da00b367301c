"""What every deployment provider is handed, how it reads its artifacts, and the two ways it can end early."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

from chalicelib.store.artifacts import ArtifactChanged, artifact_url, open_artifact_stream

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
    etag: str | None = None  # its object's ETag at its job's finish: a changed object is not deployed

    def description(self) -> dict[str, Any]:
        """The artifact as webhooks and agents are told of it, with a download URL valid for 10 minutes (none when
        it is no longer stored, or not as its job left it)."""
        try:
            url = artifact_url(self.job_prefix, self.file_name, ARTIFACT_URL_SECONDS, self.etag)
        except ArtifactChanged:
            url = None
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
    # the deployment job's OpenID Connect ID token for an audience (a role assumed with it instead of stored keys);
    # None where the service issues none
    id_token: Callable[[str], str] | None = None

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
    """The artifacts a provider's `artifact` setting names: names, file names or ``/regex/`` (searched for in either),
    separated by commas or spaces; empty = all.

    A name or pattern that matches no artifact fails the deployment: delivering less than asked would pass unnoticed.
    """
    if not setting or not setting.strip():
        return list(artifacts)
    wanted: set[int] = set()
    for part in _parts(setting):
        if found := _matching(artifacts, part):
            wanted |= found  # a name may itself contain spaces
            continue
        for word in _words(part):
            found = _matching(artifacts, word)
            if not found:
                kind = "matches" if _is_pattern(word) else "is named"
                raise DeployFailed(f"No artifact of the build {kind} {word!r} (the provider's artifact setting).")
            wanted |= found
    return [artifact for index, artifact in enumerate(artifacts) if index in wanted]


def _parts(setting: str) -> list[str]:
    """The setting split at commas, except those inside a ``/regex/`` (``/v{1,2}/``)."""
    parts: list[str] = []
    for piece in setting.split(","):
        if parts and parts[-1].startswith("/") and not _is_pattern(parts[-1]):
            parts[-1] = f"{parts[-1]},{piece}".strip()
        else:
            parts.append(piece.strip())
    return parts


def _words(part: str) -> list[str]:
    """A part split at spaces, unless it is one ``/regex/`` with spaces in it (``/my app/``, not ``/a/ /b/``)."""
    words = [word for word in _SEPARATORS.split(part) if word]
    return [part] if _is_pattern(part) and not all(map(_is_pattern, words)) else words


def _matching(artifacts: list[DeployArtifact], name: str) -> set[int]:
    """The indexes of the artifacts ``name`` names, or its pattern finds in their name or file name."""
    if _is_pattern(name):
        pattern = _pattern(name)
        found = (pattern.search(artifact.name) or pattern.search(artifact.file_name) for artifact in artifacts)
        return {index for index, hit in enumerate(found) if hit}
    return {index for index, artifact in enumerate(artifacts) if name in (artifact.name, artifact.file_name)}


def _is_pattern(text: str) -> bool:
    return len(text) > 1 and text.startswith("/") and text.endswith("/")


def _pattern(rule: str) -> Any:
    """The RE2 expression of a ``/regex/``, as domain/configuration/user_regex.py compiles users' patterns (this layer
    is below the domain): matching runs in linear time, whatever the pattern."""
    import re2  # loads only where a pattern is matched: cold start

    options = re2.Options()
    options.log_errors = False  # the user is told, the service's log is not
    try:
        return re2.compile(rule[1:-1], options=options)
    except re2.error:
        raise DeployFailed(
            f"The artifact setting's pattern {rule} is not supported: patterns run on RE2, which has no lookaround "
            "or backreferences."
        ) from None


@contextmanager
def open_artifact(artifact: DeployArtifact) -> Iterator[BinaryIO]:
    """The artifact's bytes, streamed from the data bucket (never whole in memory); DeployFailed if it is gone."""
    try:
        stream = open_artifact_stream(artifact.job_prefix, artifact.file_name, artifact.etag)
    except FileNotFoundError:
        raise DeployFailed(f"The artifact {artifact.file_name} is no longer stored: it cannot be deployed.") from None
    except ArtifactChanged:
        raise DeployFailed(
            f"The artifact {artifact.file_name} changed after its build's job ended: it is not deployed."
        ) from None
    try:
        yield cast(BinaryIO, stream)
    finally:
        stream.close()
