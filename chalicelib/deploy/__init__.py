"""Deployment providers: one module each, chosen by the environment's provider name (AppVeyor's, case-sensitive).

Modules are imported when first used, so a function that never deploys to Azure never loads its SDK.
"""

from __future__ import annotations

import importlib

from chalicelib.deploy.base import Delivery, DeployFailed

_MODULES = {
    "AzureBlob": "azure_blob",
    "FTP": "ftp",
    "GitHub": "github",
    "NuGet": "nuget",
    "S3": "s3",
    "Webhook": "webhook",
}


def providers() -> list[str]:
    """The providers the service delivers with itself, by name."""
    return sorted(_MODULES)


def deliver(provider: str, delivery: Delivery) -> None:
    """Run the provider; DeployFailed on failure, DeployStopped when stopped."""
    module = _MODULES.get(provider)
    if module is None:
        supported = ", ".join(sorted(_MODULES))
        raise DeployFailed(
            f"The {provider} provider is not supported by Conveyor: "
            f"environments can deploy with {supported}, or through Agent."
        )
    importlib.import_module(f"chalicelib.deploy.{module}").deliver(delivery)
