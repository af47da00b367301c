"""Repository providers: which names they take, and where their repositories are cloned from."""

from __future__ import annotations

import re
from urllib.parse import urlparse, urlsplit

from chalicelib import executors, outbound
from chalicelib.config import repository_base_url, settings
from chalicelib.domain.shared.validation import invalid, too_long

# provider -> (its public host, the SCM it speaks)
PROVIDERS: dict[str, tuple[str | None, str]] = {
    "gitHub": ("https://github.com", "git"),
    "bitBucket": ("https://bitbucket.org", "git"),
    "vso": ("https://dev.azure.com", "git"),
    "gitLab": ("https://gitlab.com", "git"),
    "kiln": ("https://kilnhg.com", "git"),
    "stash": (None, "git"),  # Bitbucket Server has no public host: set CONVEYOR_STASH_URL
    "gitea": (None, "git"),  # Gitea and Forgejo likewise: CONVEYOR_GITEA_URL
    "git": (None, "git"),
    "mercurial": (None, "mercurial"),
    "subversion": (None, "subversion"),
}
URL_PROVIDERS = {"git", "mercurial", "subversion"}
MAX_REPOSITORY_NAME_LENGTH = 512  # an owner/repo name, or a clone URL
_OWNER_REPO = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_. -]+)+$")
_URL_SCHEMES = {"https", "http", "git", "svn"}


def valid_repository(provider: str, name: str) -> tuple[str, str]:
    """The provider and repository name of a new project, checked; returns (name, scm)."""
    if provider not in PROVIDERS:
        raise invalid("repositoryProvider", f"repositoryProvider must be one of: {', '.join(PROVIDERS)}.")
    name = name.strip()
    if len(name) > MAX_REPOSITORY_NAME_LENGTH:
        raise too_long("repositoryName", MAX_REPOSITORY_NAME_LENGTH)
    if provider in URL_PROVIDERS:
        _check_url(name)
    elif not _OWNER_REPO.match(name) or ".." in name:
        raise invalid("repositoryName", f"repositoryName must be 'owner/repo' for {provider}.")
    elif not clone_url(provider, name):
        raise invalid("repositoryProvider", unserved(provider))
    return name, PROVIDERS[provider][1]


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


def repository_title(name: str) -> str:
    """A project's name from its repository: the last path segment, without ``.git``."""
    last = name.rstrip("/").split("/")[-1]
    return last[:-4] if last.endswith(".git") else last


def clone_url(provider: str, name: str, ssh: bool = False) -> str:
    """Where builds fetch the repository from; hosted providers' base URLs are configurable. ``ssh``: a hosted
    repository's ``ssh://git@host/owner/repo.git`` form, fetched with the project's deploy key."""
    if provider in URL_PROVIDERS:
        return name
    if ssh:
        host = urlsplit(repository_base_url(provider, PROVIDERS[provider][0] or "")).hostname
        return f"ssh://git@{host}/{name}.git" if host else ""  # no host known (stash without its URL): none
    public_host, _ = PROVIDERS[provider]
    base = repository_base_url(provider, public_host or "")
    if not base:
        return ""  # no server known (stash, gitea without their URL): never a path on the service's own disk
    if provider == "vso":
        organisation, _, project = name.partition("/")
        return f"{base}/{organisation}/{project}/_git/{repository_title(name)}"
    return f"{base}/{name}.git"
