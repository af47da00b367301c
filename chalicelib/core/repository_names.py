"""Repository names as projects stored them: the ``user:password@`` a clone URL may carry from before such names were
refused, and the name responses show without it.

Pure, and here below every layer that reads it (the project's shape, the notifications' payload, the clone
credentials), so that reading a project loads no source-control code (docs/architecture.md, "What a cold start
loads").
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

from chalicelib.core.projects import Project

_SCHEMES_WITH_PASSWORDS = {"https", "http", "git", "svn"}  # an ssh:// URL's user (git@) is no secret


def without_credentials(name: str) -> tuple[str, str | None, str | None]:
    """A repository name without the ``user:password@`` a project stored before such names were refused, and the
    user name and password it carried (None where it had none)."""
    parsed = urlsplit(name)
    if parsed.scheme not in _SCHEMES_WITH_PASSWORDS or "@" not in parsed.netloc:
        return name, None, None
    userinfo, _, host = parsed.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return urlunsplit(parsed._replace(netloc=host)), unquote(user) or None, unquote(password) if colon else None


def public_repository_name(project: Project) -> str:
    """The repository name as responses show it: without credentials a project stored before they were refused."""
    return without_credentials(project.repository_name)[0]


def repository_title(name: str) -> str:
    """A project's name from its repository: the last path segment, without ``.git``."""
    last = name.rstrip("/").split("/")[-1]
    return last[:-4] if last.endswith(".git") else last
