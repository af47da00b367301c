"""What a deployment job delivers and with what, whichever way it was started (an environment, or an inline entry)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from chalicelib.core.jobs import Job
from chalicelib.deploy.base import DeployArtifact
from chalicelib.store import blobs

_VARIABLE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.]*)\)")


@dataclass(frozen=True)
class DeploymentInputs:
    """What a deployment job delivers and with what: the same whether the runner or an agent delivers it."""

    build_jobs: list[Job]  # the build's jobs whose artifacts go (buildJobId's, or every job)
    artifacts: list[DeployArtifact]
    variables: dict[str, str]  # the build's APPVEYOR_* variables, then the environment's, then the request's
    settings: dict[str, str]  # the provider settings, secrets decrypted, $(NAME) replaced by the variables
    secrets: list[str]  # every secret value, to mask in the log
    notes: list[str] = field(default_factory=list)  # lines the log starts with (what was left out, and why)
    refusal: str | None = None  # why the deployment cannot deliver at all: it fails, saying so


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """``$(NAME)`` replaced by the variable's value; an unknown name is left as written, so the mistake shows."""
    return _VARIABLE.sub(lambda found: variables.get(found.group(1), found.group(0)), text)


def job_artifacts(jobs: list[Job]) -> list[DeployArtifact]:
    """Every artifact of the jobs, where storage holds it."""
    return [
        DeployArtifact(
            file_name=artifact.file_name,
            name=artifact.name,
            type=artifact.type,
            size=artifact.size,
            job_prefix=blobs.prefix_of(job),
            etag=artifact.etag,
        )
        for job in jobs
        for artifact in job.artifacts
    ]
