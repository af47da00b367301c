"""The providers' declarations (chalicelib/deploy/providers.py): each delivered one has its module and its row in
docs/api.md, and the settings that bind secrets never lose one."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from chalicelib.deploy import providers
from chalicelib.deploy.providers import PROVIDERS, Provider

API_DOCS = Path(__file__).resolve().parents[3] / "docs" / "api.md"
# What stored tokens were bound to when the declarations moved to deploy/ (issue 37): one gone would bind new
# secrets less strictly, and leave the stored ones of an environment that sets it undecryptable.
BOUND_SETTINGS = (
    "url",
    "server",
    "host",
    "endpoint",
    "symbol_server",
    "repository",
    "bucket",
    "storage_account_name",
    "role_arn",
)
DELIVERED = [provider for provider in PROVIDERS if provider.module is not None]


def documented_row(name: str) -> str:
    """The provider's row of docs/api.md's table of what each provider does."""
    rows = [line for line in API_DOCS.read_text().splitlines() if line.startswith(f"| `{name}` |")]
    assert len(rows) == 1, f"docs/api.md has no row (or several) for the {name} provider"
    return rows[0]


@pytest.mark.parametrize("provider", DELIVERED, ids=lambda provider: provider.name)
def test_a_delivered_provider_has_a_module_that_delivers(provider: Provider) -> None:
    module = importlib.import_module(f"chalicelib.deploy.{provider.module}")

    assert callable(module.deliver)


@pytest.mark.parametrize("provider", DELIVERED, ids=lambda provider: provider.name)
def test_a_delivered_providers_row_in_the_docs_names_its_hosts_destinations_and_secrets(provider: Provider) -> None:
    row = documented_row(provider.name)

    named = set(re.findall(r"`(\w+)`", row))
    assert set(provider.destination_settings + provider.secrets) <= named


def test_every_provider_is_named_once_and_its_settings_in_lower_case() -> None:
    names = [provider.name for provider in PROVIDERS]
    settings = [name for provider in PROVIDERS for name in provider.destination_settings + provider.secrets]

    assert len({name.lower() for name in names}) == len(names)
    assert all(name == name.lower() for name in settings)


def test_no_setting_that_binds_secrets_is_lost_and_every_host_binds_them() -> None:
    assert set(BOUND_SETTINGS) <= set(providers.destination_settings())
    assert set(providers.host_settings()) <= set(providers.destination_settings())


def test_no_secret_setting_names_a_destination() -> None:
    """A secure destination is no part of what its secrets are bound to: a provider's secret is never one."""
    assert not {name for provider in PROVIDERS for name in provider.secrets} & set(providers.destination_settings())


def test_inline_deployments_use_the_delivered_providers_and_no_other() -> None:
    assert providers.inline_names() == sorted(provider.name for provider in DELIVERED)
    assert providers.AGENT in providers.names()
    assert providers.AGENT not in providers.inline_names()


def test_only_agent_environments_are_delivered_by_agents_and_names_match_as_written() -> None:
    assert [provider.name for provider in PROVIDERS if providers.by_agents(provider.name)] == [providers.AGENT]
    assert not providers.by_agents("agent") and not providers.by_agents("Webhook")
