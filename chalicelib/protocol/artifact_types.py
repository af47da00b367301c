"""The types an artifact may have, as AppVeyor spells them: what a runner names when it stores one, and what the
service keeps of the runner's word when the job finishes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ARTIFACT_TYPES = (
    "Auto",
    "WebDeployPackage",
    "NuGetPackage",
    "AzureCloudService",
    "AzureCloudServiceConfig",
    "SsdtPackage",
    "Zip",
    "File",
    "ElasticBeanstalkPackage",
    "OctopusPackage",
)
_CANONICAL_TYPES = {name.lower(): name for name in ARTIFACT_TYPES}


def canonical_type(value: Any, path_text: str, log: Callable[[str], None]) -> str:
    """AppVeyor's spelling of an artifact type given in any case; "Auto" when none or unknown (with a warning)."""
    if not value or not str(value).strip():
        return "Auto"
    canonical = _CANONICAL_TYPES.get(str(value).strip().lower())
    if canonical is None:
        log(f"Unknown artifact type '{value}' for '{path_text}'; using Auto.")
        return "Auto"
    return canonical
