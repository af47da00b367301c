"""Deployment providers: one module each, chosen by the environment's provider name (AppVeyor's, case-sensitive),
declared in providers.py.

Modules are imported when first used, so a function that never deploys to Azure never loads its SDK, and one that
reads the providers' facts (providers.py) loads none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from chalicelib.deploy.providers import AGENT, delivered

if TYPE_CHECKING:
    from chalicelib.deploy.base import Delivery


def deliver(provider: str, delivery: Delivery) -> None:
    """Run the provider; DeployFailed on failure, DeployStopped when stopped."""
    _module(provider).deliver(delivery)


def inline_refusal(provider: str, settings: Mapping[str, str]) -> str | None:
    """Why an appveyor.yml deploy: entry of the provider, with these settings, may not deliver; None if it may (or
    if the service does not deliver with it: deliver says so). The provider's module says, if it defines
    ``inline_refusal(settings)``."""
    if provider not in delivered():
        return None
    refusal = getattr(_module(provider), "inline_refusal", None)
    return None if refusal is None else refusal(settings)


def _module(provider: str) -> ModuleType:
    module = delivered().get(provider)
    if module is None:
        from chalicelib.deploy.base import DeployFailed  # its artifacts' reads load only where a provider runs

        supported = ", ".join(sorted(delivered()))
        raise DeployFailed(
            f"The {provider} provider is not supported by Conveyor: "
            f"environments can deploy with {supported}, or through {AGENT}."
        )
    return importlib.import_module(f"chalicelib.deploy.{module}")
