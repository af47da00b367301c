"""Secret values at rest: encrypted with the stage's KMS key, bound to their account.

A secret is stored, and shown to clients, as an opaque token: ``cvy1:`` and the base64 KMS
ciphertext. A client that sends a token back keeps the secret; one that sends anything else sends a
new plain value, which is encrypted before it is stored. Plain text never leaves the service except
into the build that uses it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.domain.validation import invalid
from chalicelib.errors import Invalid
from chalicelib.runner.logstream import MIN_SECRET_CHARS  # the log masks no shorter value

TOKEN_PREFIX = "cvy1:"
MAX_SECRET_BYTES = 4096  # what KMS encrypts in one call
MAX_NEW_SECRETS = 200  # secure values one request may set (or send tokens of): each costs a KMS call


def _context(account_id: int) -> dict[str, str]:
    return {"conveyor-account": str(account_id)}


def encrypt(account_id: int, plain: str) -> str:
    """The token of a new secret of the account."""
    blob = aws.client("kms").encrypt(
        KeyId=settings().kms_key, Plaintext=plain.encode(), EncryptionContext=_context(account_id)
    )["CiphertextBlob"]
    return TOKEN_PREFIX + base64.b64encode(blob).decode()


def decrypt(account_id: int, token: str) -> str:
    """The plain value behind a token of the account; Invalid for anything else."""
    try:
        blob = base64.b64decode(token[len(TOKEN_PREFIX) :], validate=True)
        plain: bytes = aws.client("kms").decrypt(CiphertextBlob=blob, EncryptionContext=_context(account_id))[
            "Plaintext"
        ]
    except (binascii.Error, ValueError, ClientError) as error:
        raise Invalid("A secure value is not a secret of this account.") from error
    return plain.decode()


def protect(account_id: int, value: str, kept: set[str]) -> str:
    """The stored form of a secret a client sent: tokens in ``kept`` (already stored) or of this
    account as they are; any other value is a new plain secret and is encrypted."""
    if value in kept:
        return value
    if value.startswith(TOKEN_PREFIX):
        decrypt(account_id, value)
        return value
    return encrypt(account_id, value)


def secret_values(document: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every secret inside a JSON document (settings, YAML), as (the object holding it, its key):
    ``{"isEncrypted": true, "value": ...}`` named values, and ``{"secure": ...}`` notification settings."""
    if isinstance(document, dict):
        if document.get("isEncrypted") is True and "value" in document:
            yield document, "value"
        elif set(document) == {"secure"}:
            yield document, "secure"
        for child in document.values():
            yield from secret_values(child)
    elif isinstance(document, list):
        for child in document:
            yield from secret_values(child)


def protect_document(account_id: int, document: Any, stored: Any, field: str = "settings") -> None:
    """Encrypt, in place, every new plain secret of ``document``; ``stored`` is what it replaces.

    Refused (``field`` names the request field) before any KMS call: a secure value that is not a string, a new
    one that KMS cannot encrypt (over MAX_SECRET_BYTES) or that the build log could not mask (under
    MIN_SECRET_CHARS, surrounding spaces aside; stored ones stay), and more than MAX_NEW_SECRETS to look at.
    """
    kept = {holder[key] for holder, key in secret_values(stored) if isinstance(holder[key], str)}
    found = list(secret_values(document))
    for holder, key in found:
        value = holder[key]
        if not isinstance(value, str):
            raise Invalid("A secure value must be a string.")
        if value in kept or value.startswith(TOKEN_PREFIX):
            continue
        if len(value.strip()) < MIN_SECRET_CHARS:
            raise invalid(
                field,
                f"A secure value must be at least {MIN_SECRET_CHARS} characters long (surrounding spaces aside): "
                "the build log cannot mask a shorter one.",
            )
        if len(value.encode()) > MAX_SECRET_BYTES:
            raise invalid(
                field, f"A secure value must be {MIN_SECRET_CHARS} characters to {MAX_SECRET_BYTES} bytes long."
            )
    if sum(holder[key] not in kept for holder, key in found) > MAX_NEW_SECRETS:
        raise invalid(field, f"At most {MAX_NEW_SECRETS} new secure values can be sent at once.")
    for holder, key in found:
        holder[key] = protect(account_id, holder[key], kept)
