"""Where a deployment delivers, as the secrets it is handed are bound to it (domain/shared/secrets.py binds them):
an appveyor.yml deploy: entry's provider and destination settings as written, and an environment's, or for an Agent
environment whoever holds its access key. A token set for one destination decrypts for no other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.deploy import providers

# the settings that say where secrets go, an environment's or an appveyor.yml deploy: entry's, of whichever provider
DESTINATION_SETTINGS = providers.destination_settings()


def delivery_binding(provider: str, access_key_hash: str, settings: Mapping[str, Any] | None = None) -> str:
    """Where an environment's deployments hand its settings and variables: for an Agent environment whoever holds
    its access key (known by the key's hash); for another, its provider and the destination settings of its
    ``settings`` as written (``destinations``), if it has any. Without ``settings``: the provider alone, as
    environments' secrets were bound before their destinations were (issue 34, second review)."""
    if provider == providers.AGENT:  # whoever holds the environment's access key
        return f"@{provider}:{access_key_hash}"
    written = destinations((settings or {}).get("providerSettings") or [])
    return f"@{provider}:{written}" if written else f"@{provider}"


def deploy_destination(entry: dict[str, Any]) -> str:
    """Where a deploy: entry delivers, as its secure settings are bound to it: the provider and each destination
    setting's value as written (lower-cased: host names are not case-sensitive)."""
    return f"@{entry.get('provider') or ''}:{destinations(entry.get('providerSettings') or [])}"


def destinations(provider_settings: list[Any]) -> str:
    """Where provider settings deliver, as one text: every destination setting's value, each name however it is
    written (``host`` and ``HOST`` both: a provider reads one, and either may be the one), sorted."""
    written = []
    for setting in provider_settings:
        if isinstance(setting, dict) and str(setting.get("name", "")).lower() in DESTINATION_SETTINGS:
            value = setting.get("value") or {}
            if not value.get("isEncrypted"):
                written.append(f"{str(setting['name']).lower()}={str(value.get('value') or '').strip().lower()}")
    return ";".join(sorted(written))
