"""Making API keys and passwords, and hashing passwords (scrypt, from the standard library)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

USER_KEY_PREFIX = "v2."
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


def new_api_key(user_level: bool = False) -> str:
    """A fresh random key; user-level keys carry AppVeyor's ``v2.`` prefix."""
    key = secrets.token_urlsafe(24)
    return f"{USER_KEY_PREFIX}{key}" if user_level else key


def is_user_level_key(key: str) -> bool:
    return key.startswith(USER_KEY_PREFIX)


def new_password() -> str:
    """A password for ``generatePassword``: random, never shown, to be reset by its owner."""
    return secrets.token_urlsafe(18)


def hash_password(password: str) -> str:
    """A salted scrypt hash in the form ``scrypt$n$r$p$salt$hash``."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
    parts = [str(_SCRYPT["n"]), str(_SCRYPT["r"]), str(_SCRYPT["p"]), _b64(salt), _b64(digest)]
    return "scrypt$" + "$".join(parts)


def password_matches(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` was made from."""
    _, n, r, p, salt, digest = stored.split("$")
    candidate = hashlib.scrypt(password.encode(), salt=_unb64(salt), n=int(n), r=int(r), p=int(p))
    return hmac.compare_digest(candidate, _unb64(digest))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
