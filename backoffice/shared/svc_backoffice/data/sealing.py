"""Encryption at rest of write-only secrets (payment webhook secrets, integration tokens): AES-256-GCM with a
configured key, or AWS KMS; hosted, AES-256-GCM with the Shop's field_key. A sealed value is bound to its
`purpose` (table.column:row key), so a ciphertext copied to another row does not open. Plaintexts are never
logged and never returned by a route."""

from __future__ import annotations

import base64
import binascii
import functools
import os
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from psycopg.types.json import Jsonb

from svc_backoffice.core import tenancy
from svc_backoffice.core.config import ConfigurationError, SelfHostedSettings, self_hosted_settings

if TYPE_CHECKING:
    from pydantic import BaseModel

    from svc_backoffice.data.db import Database

_AES = b"\x01"  # 0x01 | nonce (12) | AES-256-GCM ciphertext and tag
_KMS = b"\x02"  # 0x02 | KMS CiphertextBlob (encryption context {"purpose": ...})
_HKDF_INFO = b"svc-backoffice field encryption v1"


class SealError(RuntimeError):
    """A sealed value that cannot be opened with the configured key (wrong key, wrong row, tampered)."""


def _derive(material: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(material)


class Sealer:
    """Seals and opens values with the key the settings name: a configured AES key, one derived from a
    Secrets Manager secret, or a KMS key (its client made on first use, or given); or with `key`, a 32-byte
    AES key given as it is (a hosted shop's field_key)."""

    def __init__(
        self, settings: SelfHostedSettings | None = None, kms: Any = None, *, key: bytes | None = None
    ) -> None:
        if (settings is None) == (key is None):
            raise ValueError("a Sealer takes settings or a key")
        self._settings = settings
        self._kms_client = kms
        self._key = key

    def _kms(self) -> Any:
        if self._kms_client is None:
            import boto3  # provided by the Lambda runtime

            self._kms_client = boto3.client("kms")
        return self._kms_client

    @functools.cached_property
    def _aes_key(self) -> bytes:
        if self._key is not None:
            return self._key
        settings = self._settings
        assert settings is not None
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

            value = boto3.client("secretsmanager").get_secret_value(
                SecretId=settings.field_encryption_secret_arn
            )
            return _derive(str(value["SecretString"]).encode())
        raise ConfigurationError(
            "field encryption is not configured: set FIELD_ENCRYPTION_KEY, FIELD_ENCRYPTION_SECRET_ARN "
            "or FIELD_ENCRYPTION_KMS_KEY_ARN"
        )

    def seal(self, plaintext: str, purpose: str) -> bytes:
        kms_key = self._settings.field_encryption_kms_key_arn if self._settings is not None else None
        if kms_key:
            blob = self._kms().encrypt(
                KeyId=kms_key, Plaintext=plaintext.encode(), EncryptionContext={"purpose": purpose}
            )["CiphertextBlob"]
            return _KMS + bytes(blob)
        nonce = os.urandom(12)
        return _AES + nonce + AESGCM(self._aes_key).encrypt(nonce, plaintext.encode(), purpose.encode())

    def unseal(self, sealed: bytes, purpose: str) -> str:
        sealed = bytes(sealed)
        try:
            if sealed[:1] == _AES:
                return AESGCM(self._aes_key).decrypt(sealed[1:13], sealed[13:], purpose.encode()).decode()
            if sealed[:1] == _KMS and self._settings is not None:
                answer = self._kms().decrypt(
                    CiphertextBlob=sealed[1:], EncryptionContext={"purpose": purpose}
                )
                return bytes(answer["Plaintext"]).decode()
        except (InvalidTag, ValueError) as exc:
            raise SealError(f"cannot open the sealed value of {purpose}") from exc
        raise SealError(f"unknown sealed format for {purpose}")


@functools.lru_cache(maxsize=4)
def sealer_for(settings: SelfHostedSettings) -> Sealer:
    """One sealer per configuration (settings are frozen, so new settings get a new sealer)."""
    return Sealer(settings)


@functools.lru_cache(maxsize=16)
def _shop_sealer(key: bytes) -> Sealer:
    return Sealer(key=key)


def current() -> Sealer:
    """The sealer of the shop this request serves."""
    shop = tenancy.current_shop()
    return _shop_sealer(shop.field_key) if shop is not None else sealer_for(self_hosted_settings())


def seal(plaintext: str, purpose: str) -> bytes:
    return current().seal(plaintext, purpose)


def seal_given(plaintext: str | None, purpose: str) -> bytes | None:
    """A write-only secret as it is stored: sealed for `purpose`, or None (no secret) when empty or absent."""
    return seal(plaintext, purpose) if plaintext else None


def purpose_of(table: str, field: str, kind: str) -> str:
    """What a row's sealed `field` is bound to: its table, the field and the row's kind."""
    return f"{table}.{field}:{kind}"


def stored_fields(
    table: str, fields: dict[str, Any], kind: str, *, write_only: str, json_field: str
) -> dict[str, Any]:
    """A row's `fields` as `table` stores them: `json_field` wrapped as JSON, the `write_only` secret sealed
    for the row's kind as `<write_only>_encrypted` (seal_given)."""
    if json_field in fields:
        fields[json_field] = Jsonb(fields[json_field])
    if write_only in fields:
        fields[f"{write_only}_encrypted"] = seal_given(
            fields.pop(write_only), purpose_of(table, write_only, kind)
        )
    return fields


def sealed_changes(
    db: Database, table: str, row_id: str, body: BaseModel, *, write_only: str, json_field: str
) -> dict[str, Any]:
    """An update body's changes to a row of `table` as stored (stored_fields), the row locked for its kind."""
    current = db.found(f"SELECT kind FROM {table} WHERE id = %s FOR UPDATE", (row_id,))  # noqa: S608
    changes = body.model_dump(exclude_unset=True)
    return stored_fields(table, changes, current["kind"], write_only=write_only, json_field=json_field)


def unseal(sealed: bytes, purpose: str) -> str:
    return current().unseal(sealed, purpose)
