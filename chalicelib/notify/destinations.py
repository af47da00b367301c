"""Where a notifications entry sends, as its secure settings are bound to it (domain/shared/secrets.py binds them):
its provider and the settings naming its receiver as written (notify/providers.py names them), so that a token set
for one receiver, moved into another entry, decrypts nowhere."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from chalicelib.notify import providers

# the settings that say where a notifications entry sends, of whichever provider: what its secrets are bound to
NOTIFICATION_DESTINATIONS = providers.destination_settings()
MAX_DESTINATION_CHARS = 1024  # of a destination as bound; a longer one is bound by its digest (KMS bounds a context)


def notification_destination(entry: Any) -> str:
    """Where a notifications entry sends, as its secure settings are bound to it: its provider (in any case) and
    each destination setting's value as written, a secure one aside. Values keep their case (unlike deploy entries'
    host names): a URL's path, a query, an address's local part tell receivers apart, so a token set for
    ``https://hooks.example.com/Team-A`` is no token for ``.../team-a`` (fourth review)."""
    if not isinstance(entry, dict):
        return ""
    settings = entry.get("settings")
    written = []
    for name, value in settings.items() if isinstance(settings, dict) else ():
        if str(name).lower() in NOTIFICATION_DESTINATIONS and not _is_secure(value) and value not in (None, "", []):
            written.append(f"{str(name).lower()}={_destination_text(value)}")
    where = ";".join(sorted(written))
    if len(where) > MAX_DESTINATION_CHARS:
        where = "sha256=" + hashlib.sha256(where.encode()).hexdigest()
    return f"@{str(entry.get('provider') or '').strip().lower()}:{where}"


def _destination_text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_destination_text(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value).strip()


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("isEncrypted") is True or set(value) == {"secure"})
