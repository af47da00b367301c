"""Repository providers: which names they take, and where their repositories are cloned from (scm/forges/ says, one
module a forge)."""

from __future__ import annotations

import re
from urllib.parse import urlparse

from chalicelib import executors, outbound
from chalicelib.config import settings
from chalicelib.domain.shared.validation import invalid, too_long
from chalicelib.scm import forges

MAX_REPOSITORY_NAME_LENGTH = 512  # an owner/repo name, or a clone URL
_OWNER_REPO = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_. -]+)+$")
_URL_SCHEMES = {"https", "http", "git", "svn"}


def valid_repository(provider: str, name: str) -> tuple[str, str]:
    """The provider and repository name of a new project, checked; returns (name, scm)."""
    forge = forges.named(provider)
    if forge is None:
        choices = ", ".join(forges.repository_types())
        raise invalid("repositoryProvider", f"repositoryProvider must be one of: {choices}.")
    name = name.strip()
    if len(name) > MAX_REPOSITORY_NAME_LENGTH:
        raise too_long("repositoryName", MAX_REPOSITORY_NAME_LENGTH)
    if forge.by_url:
        _check_url(name)
    elif not _OWNER_REPO.match(name) or ".." in name:
        raise invalid("repositoryName", f"repositoryName must be 'owner/repo' for {provider}.")
    elif not forge.clone_url(name):
        raise invalid("repositoryProvider", unserved(provider))
    return name, forge.scm


def unserved(provider: str) -> str:
    """Why a provider without a public host cannot be built from: the operator has not said where its server is."""
    return f"This service has no {provider} server: its operator sets one with CONVEYOR_{provider.upper()}_URL."


def _check_url(name: str) -> None:
    parsed = urlparse(name)
    local = parsed.scheme in ("", "file")
    if local:
        if not settings().allow_local_repositories:
            raise invalid("repositoryName", "Local repository paths are not allowed on this service.")
        if not (parsed.path or "").startswith("/"):
            raise invalid("repositoryName", "A local repository must be an absolute path or a file:// URL.")
        unreadable = executors.local_repository_refusal(parsed.path)
        if unreadable:
            raise invalid("repositoryName", unreadable)
        return
    if parsed.scheme not in (*_URL_SCHEMES, "ssh") or not parsed.netloc:
        raise invalid("repositoryName", "repositoryName must be a clone URL (https://, http://, git:// or ssh://).")
    if parsed.password is not None or (parsed.scheme != "ssh" and "@" in parsed.netloc):  # ssh://git@ is no secret
        raise invalid(
            "repositoryName",
            "repositoryName must not carry credentials (user:password@): every member could read them. Set "
            "repositoryAuthentication to 'credentials' with repositoryUsername and repositoryPassword instead.",
        )
    refusal = outbound.url_refusal(name)
    if refusal:
        raise invalid("repositoryName", refusal)


def clone_url(provider: str, name: str, ssh: bool = False) -> str:
    """Where builds fetch the repository from; hosted providers' base URLs are configurable. ``ssh``: a hosted
    repository's ``ssh://git@host/owner/repo.git`` form, fetched with the project's deploy key."""
    return forges.of(provider).clone_url(name, ssh)
