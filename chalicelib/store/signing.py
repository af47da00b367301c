"""The ID tokens' signing keys: asymmetric KMS keys that sign and publish their public half, never their private one.

The private key stays in KMS: the service sends what it signs (``Sign``, RSASSA-PKCS1-v1_5 with SHA-256, the JWT
``RS256``) and reads the public key (``GetPublicKey``, DER SubjectPublicKeyInfo). A public key does not change, so
each is read once per process, and the key an alias named then is the one that signs (by its own id): a token's
``kid`` names the key that signed it even if the alias moves meanwhile (rotation changes the settings, docs/oidc.md).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from chalicelib import aws

SIGNING_ALGORITHM = "RSASSA_PKCS1_V1_5_SHA_256"  # RS256
MAX_MESSAGE_BYTES = 4096  # what KMS signs as the message itself (MessageType RAW)

_public: dict[str, PublicKey] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class PublicKey:
    key_id: str  # the KMS key's own id (a UUID), whatever alias named it
    der: bytes  # SubjectPublicKeyInfo


class KeyUnavailable(Exception):
    """KMS would not sign with the key, or show it: missing, disabled, of another kind, or not ours to use."""


def public_key(key: str) -> PublicKey:
    """The public half of the KMS key ``key`` (an id, ARN or alias), read once per process."""
    with _lock:
        found = _public.get(key)
    if found is not None:
        return found
    from botocore.exceptions import ClientError

    try:
        answer = aws.client("kms").get_public_key(KeyId=key)
    except ClientError as error:
        raise KeyUnavailable(f"{key}: {error.response.get('Error', {}).get('Code', '')}") from error
    if SIGNING_ALGORITHM not in answer.get("SigningAlgorithms", []):
        raise KeyUnavailable(f"{key} does not sign with {SIGNING_ALGORITHM}")
    found = PublicKey(key_id=str(answer["KeyId"]).rsplit("/", 1)[-1], der=bytes(answer["PublicKey"]))
    with _lock:
        _public[key] = found
    return found


def sign(key_id: str, message: bytes) -> bytes:
    """KMS's RS256 signature of ``message`` (at most 4096 bytes) with the key of id ``key_id``."""
    from botocore.exceptions import ClientError

    if len(message) > MAX_MESSAGE_BYTES:
        raise ValueError(f"KMS signs at most {MAX_MESSAGE_BYTES} bytes as the message itself.")
    try:
        answer = aws.client("kms").sign(
            KeyId=key_id, Message=message, MessageType="RAW", SigningAlgorithm=SIGNING_ALGORITHM
        )
    except ClientError as error:
        raise KeyUnavailable(f"{key_id}: {error.response.get('Error', {}).get('Code', '')}") from error
    return bytes(answer["Signature"])


def forget_public_keys() -> None:
    """Read every public key from KMS again (tests, which make new keys behind the same alias)."""
    with _lock:
        _public.clear()
