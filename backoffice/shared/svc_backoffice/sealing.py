"""Encryption at rest of write-only secrets (payment webhook secrets, integration tokens): AES-256-GCM with a
configured key, or AWS KMS. A sealed value is bound to its `purpose` (table.column:row key), so a ciphertext
copied to another row does not open. Plaintexts are never logged and never returned by a route."""

from __future__ import annotations

import base64
import binascii
import functools
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from svc_backoffice.config import ConfigurationError, get_settings

_AES = b"\x01"  # 0x01 | nonce (12) | AES-256-GCM ciphertext and tag
_KMS = b"\x02"  # 0x02 | KMS CiphertextBlob (encryption context {"purpose": ...})
_HKDF_INFO = b"svc-backoffice field encryption v1"


class SealError(RuntimeError):
    """A sealed value that cannot be opened with the configured key (wrong key, wrong row, tampered)."""


def _derive(material: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(material)


class _Kms:
    """Injectable KMS client holder: tests set `client`; otherwise boto3's, created on first use."""

    client: Any = None


def use_kms_client(client: Any) -> None:
    _Kms.client = client


def _kms() -> Any:
    if _Kms.client is None:
        import boto3  # provided by the Lambda runtime

        _Kms.client = boto3.client("kms")
    return _Kms.client


@functools.cache
def _aes_key() -> bytes:
    settings = get_settings()
    if settings.field_encryption_key:
        try:
            key = base64.b64decode(settings.field_encryption_key, validate=True)
        except (binascii.Error, ValueError):
            raise ConfigurationError("FIELD_ENCRYPTION_KEY must be base64") from None
        if len(key) != 32:
            raise ConfigurationError("FIELD_ENCRYPTION_KEY must decode to 32 bytes")
        return key
    if settings.field_encryption_secret_arn:
        import boto3  # provided by the Lambda runtime

        value = boto3.client("secretsmanager").get_secret_value(SecretId=settings.field_encryption_secret_arn)
        return _derive(str(value["SecretString"]).encode())
    raise ConfigurationError(
        "field encryption is not configured: set FIELD_ENCRYPTION_KEY, FIELD_ENCRYPTION_SECRET_ARN "
        "or FIELD_ENCRYPTION_KMS_KEY_ARN"
    )


def seal(plaintext: str, purpose: str) -> bytes:
    kms_key = get_settings().field_encryption_kms_key_arn
    if kms_key:
        blob = _kms().encrypt(
            KeyId=kms_key, Plaintext=plaintext.encode(), EncryptionContext={"purpose": purpose}
        )["CiphertextBlob"]
        return _KMS + bytes(blob)
    nonce = os.urandom(12)
    return _AES + nonce + AESGCM(_aes_key()).encrypt(nonce, plaintext.encode(), purpose.encode())


def unseal(sealed: bytes, purpose: str) -> str:
    sealed = bytes(sealed)
    try:
        if sealed[:1] == _AES:
            return AESGCM(_aes_key()).decrypt(sealed[1:13], sealed[13:], purpose.encode()).decode()
        if sealed[:1] == _KMS:
            answer = _kms().decrypt(CiphertextBlob=sealed[1:], EncryptionContext={"purpose": purpose})
            return bytes(answer["Plaintext"]).decode()
    except (InvalidTag, ValueError) as exc:
        raise SealError(f"cannot open the sealed value of {purpose}") from exc
    raise SealError(f"unknown sealed format for {purpose}")


def reset() -> None:
    _aes_key.cache_clear()
