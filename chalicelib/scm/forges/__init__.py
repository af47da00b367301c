"""Every forge Conveyor knows, one line each (its module beside this one implements scm/forge.py's Forge), in the
order AppVeyor lists its repositoryProvider values; and the lookups the domain asks them through, by the name a
project gives its repository's provider or by a webhook's route.

Adding a forge: its module here, its line in FORGES, its route in core/webhooks.py if it has a webhook, its row in
docs/forges.md and a test (docs/map.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.errors import Invalid
from chalicelib.scm.forge import Forge
from chalicelib.scm.forges import azure_repos, bitbucket, bitbucket_server, by_url, gitea, github, gitlab, kiln
from chalicelib.scm.hook_events import HookEvent

FORGES: tuple[Forge, ...] = (
    github.GITHUB,
    bitbucket.BITBUCKET,
    azure_repos.AZURE_REPOS,
    gitlab.GITLAB,
    kiln.KILN,
    bitbucket_server.BITBUCKET_SERVER,
    gitea.GITEA,
    by_url.GIT,
    by_url.MERCURIAL,
    by_url.SUBVERSION,
)
_BY_TYPE = {forge.repository_type: forge for forge in FORGES}
_BY_WEBHOOK = {forge.webhook: forge for forge in FORGES if forge.webhook}


def repository_types() -> tuple[str, ...]:
    """Every repositoryProvider a project may name."""
    return tuple(_BY_TYPE)


def webhooks() -> tuple[str, ...]:
    """Every forge's webhook route name (/api/<name>/webhook)."""
    return tuple(_BY_WEBHOOK)


def named(repository_type: str) -> Forge | None:
    """The forge a project's repositoryProvider names; None for a name no forge has."""
    return _BY_TYPE.get(repository_type)


def of(repository_type: str) -> Forge:
    """The forge of a project's repository (one of a name no forge has: what every forge does by default)."""
    return _BY_TYPE.get(repository_type) or Forge(repository_type, repository_type)


def with_statuses(repository_type: str) -> Forge | None:
    """The forge of a project's repository, when its commits take statuses; None for any other."""
    forge = _BY_TYPE.get(repository_type)
    return forge if forge is not None and forge.takes_statuses else None


def hooked(webhook: str) -> Forge:
    """The forge whose webhook has this route name (any other delivery reads as the generic git hook's)."""
    return _BY_WEBHOOK.get(webhook, by_url.GIT)


def read_event(webhook: str, headers: Mapping[str, str], body: Any) -> HookEvent:
    """The event a delivery to the webhook of this route name describes."""
    if not isinstance(body, dict):
        raise Invalid("The webhook body must be a JSON object.")
    return hooked(webhook).hook_event(headers, body)


def delivery_id(webhook: str, headers: Mapping[str, str]) -> str | None:
    """The forge's id of this delivery (the same on a redelivery), where it sends one."""
    return hooked(webhook).delivery_id(headers)
