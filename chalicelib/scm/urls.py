"""Repository URLs as they were stored: the credentials a name may carry from before they were refused in it."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

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
