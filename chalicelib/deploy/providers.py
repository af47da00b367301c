"""Every deployment provider an environment may name, and the facts the domain reads of each: the one list to add a
provider to (beside its module, its test and its row in docs/api.md).

Its facts are declared here, not in its module, so that reading them loads no provider's SDK (modules load when
they deliver). Where secrets go is read from these facts over every provider, not only the entry's own: a setting
that names where one provider delivers binds the secrets beside it whichever provider is named (an environment's
provider can be changed, and a deploy: entry's is whatever its author wrote).
"""

from __future__ import annotations

from dataclasses import dataclass

AGENT = "Agent"  # delivered by `conveyor agent` on machines holding the environment's access key, not by the service


@dataclass(frozen=True)
class Provider:
    """One provider: its name, the module that delivers with it, and which of its settings matter beyond it."""

    name: str  # AppVeyor's spelling; environments match it without regard to case, deploy: entries exactly
    # chalicelib.deploy.<module>.deliver(Delivery) delivers with it (and inline deployments may use it); None: the
    # service does not deliver it (Agent's are delivered by agents; AppVeyor's others are stored and fail to deploy).
    # The module may define inline_refusal(settings) -> str | None: why a deploy: entry's settings may not deliver.
    module: str | None = None
    hosts: tuple[str, ...] = ()  # settings naming a server the service connects to: checked by the outbound guard
    destinations: tuple[str, ...] = ()  # other settings naming where its secrets go (a repository, bucket, role)
    secrets: tuple[str, ...] = ()  # the settings meant to be secure (isEncrypted; docs/api.md says so)
    # delivered by `conveyor agent` on machines holding the environment's access key: a deployment waits for them
    agents: bool = False

    @property
    def destination_settings(self) -> tuple[str, ...]:
        """Every setting that says where its secrets go: its hosts and its other destinations."""
        return (*self.hosts, *self.destinations)


PROVIDERS = (
    Provider(AGENT, agents=True),
    Provider(
        "AzureBlob",
        "azure_blob",
        hosts=("endpoint",),
        destinations=("storage_account_name",),
        secrets=("storage_access_key",),
    ),
    Provider("AzureCS"),
    Provider("AzureWebJob"),
    Provider("BinTray"),
    Provider("FTP", "ftp", hosts=("server", "host"), secrets=("password",)),
    Provider("GitHub", "github", destinations=("repository",), secrets=("auth_token",)),
    Provider("NuGet", "nuget", hosts=("server", "symbol_server"), secrets=("api_key",)),
    # role_arn: the role the deployment's ID token is exchanged for
    Provider("S3", "s3", destinations=("bucket", "role_arn"), secrets=("secret_access_key",)),
    Provider("SqlDatabase"),
    Provider("WebDeploy"),
    Provider("Webhook", "webhook", hosts=("url",), secrets=("authorization",)),
)


def names() -> tuple[str, ...]:
    """Every provider an environment may name, sorted."""
    return tuple(sorted(provider.name for provider in PROVIDERS))


def delivered() -> dict[str, str]:
    """The providers the service delivers with itself: each name's module under chalicelib.deploy."""
    return {provider.name: provider.module for provider in PROVIDERS if provider.module is not None}


def by_agents(name: str) -> bool:
    """Whether an environment of the provider is delivered by its agents (the environment's access key is theirs)."""
    return any(provider.agents for provider in PROVIDERS if provider.name == name)


def inline_names() -> list[str]:
    """The providers an appveyor.yml deploy: entry may name (those the service delivers with), sorted."""
    return sorted(delivered())


def host_settings() -> tuple[str, ...]:
    """Every provider's settings naming a server the service connects to (lower case), each once."""
    return tuple(dict.fromkeys(name for provider in PROVIDERS for name in provider.hosts))


def destination_settings() -> tuple[str, ...]:
    """Every provider's settings naming where secrets go (lower case), each once: what secrets are bound to."""
    return tuple(dict.fromkeys(name for provider in PROVIDERS for name in provider.destination_settings))
