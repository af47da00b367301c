"""Where a deployment delivers, as its secrets are bound to it: a deploy: entry's or an environment's destination
settings as written, host names in any case, a secure one aside; an Agent environment's access key. No IO."""

from __future__ import annotations

from typing import Any

from chalicelib.deploy.destinations import DESTINATION_SETTINGS, delivery_binding, deploy_destination, destinations


def setting(name: str, value: str, secure: bool = False) -> dict[str, Any]:
    return {"name": name, "value": {"value": value, "isEncrypted": secure}}


def test_a_deploy_entry_is_bound_to_its_provider_and_its_plain_destinations_in_any_case() -> None:
    entry = {
        "provider": "FTP",
        "providerSettings": [setting("HOST", " FTP.Example.com "), setting("username", "me"), setting("password", "x")],
    }

    assert deploy_destination(entry) == "@FTP:host=ftp.example.com"


def test_a_secure_destination_binds_nothing_and_names_are_sorted() -> None:
    written = [setting("server", "b.example.com"), setting("host", "a.example.com"), setting("url", "s", secure=True)]

    assert destinations(written) == "host=a.example.com;server=b.example.com"


def test_an_agent_environment_is_bound_to_its_access_key_and_another_to_its_destinations() -> None:
    ftp_settings = {"providerSettings": [setting("server", "ftp.example.com")]}

    assert delivery_binding("Agent", "keyhash", ftp_settings) == "@Agent:keyhash"
    assert delivery_binding("FTP", "keyhash", ftp_settings) == "@FTP:server=ftp.example.com"
    assert delivery_binding("FTP", "keyhash") == "@FTP"  # as environments' secrets were bound before destinations


def test_every_provider_s_hosts_and_destinations_bind_secrets() -> None:
    assert {"server", "host", "endpoint", "storage_account_name", "repository", "bucket", "url"} <= set(
        DESTINATION_SETTINGS
    )
