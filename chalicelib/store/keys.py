"""The service's KMS key: secrets are encrypted and decrypted under an encryption context naming their owner."""

from __future__ import annotations

from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.config import settings


class Undecryptable(Exception):
    """KMS would not decrypt the blob under that context: another owner's, altered, or no ciphertext at all."""


def encrypt(plain: bytes, context: dict[str, str]) -> bytes:
    blob: bytes = aws.client("kms").encrypt(KeyId=settings().kms_key, Plaintext=plain, EncryptionContext=context)[
        "CiphertextBlob"
    ]
    return blob


def decrypt(blob: bytes, context: dict[str, str]) -> bytes:
    try:
        plain: bytes = aws.client("kms").decrypt(CiphertextBlob=blob, EncryptionContext=context)["Plaintext"]
    except ClientError as error:
        raise Undecryptable(error.response.get("Error", {}).get("Code", "")) from error
    return plain
