"""Envelope encryption: AES-256-GCM under a per-message data key wrapped by KMS (or a local key).

Ciphertext format: `v1.<wrapped data key>.<nonce>.<ciphertext+tag>` (base64url parts). The encryption context
(for example provider and user id) is authenticated as AES-GCM associated data and as the KMS encryption
context, so a ciphertext copied to another row does not decrypt.
"""

from __future__ import annotations

import base64
import json
import os
from typing import TYPE_CHECKING, Any, Protocol

from svc_shared.core.catalogue import say
from svc_shared.core.errors import DomainError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def _aesgcm(key: bytes) -> AESGCM:
    # cryptography's import (about 8 ms) waits for the first request that seals or opens a secret.
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)


def _invalid_tag() -> type[Exception]:
    from cryptography.exceptions import InvalidTag

    return InvalidTag


class DecryptionFailed(DomainError, code="decryption_failed"): ...


class KeyProvider(Protocol):
    def new_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        """A fresh 256-bit data key: (plaintext, wrapped)."""
        ...

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes: ...


def _aad(context: dict[str, str]) -> bytes:
    return json.dumps(context, sort_keys=True, separators=(",", ":")).encode()


def _b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class KmsKeyProvider:
    """Data keys from AWS KMS `GenerateDataKey`; unwrapped with `Decrypt`."""

    def __init__(self, key_id: str, kms_client: Any = None) -> None:
        self._key_id = key_id
        self._client = kms_client

    @property
    def client(self) -> Any:
        if self._client is None:
            from svc_shared.core.aws import AwsClients

            self._client = AwsClients().client("kms")
        return self._client

    def new_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        out = self.client.generate_data_key(KeyId=self._key_id, KeySpec="AES_256", EncryptionContext=context)
        return out["Plaintext"], out["CiphertextBlob"]

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        from botocore.exceptions import ClientError

        try:
            out = self.client.decrypt(CiphertextBlob=wrapped, EncryptionContext=context, KeyId=self._key_id)
        except ClientError as exc:
            raise DecryptionFailed(say("stored_secret.undecryptable")) from exc
        return bytes(out["Plaintext"])


class LocalKeyProvider:
    """Data keys wrapped with AES-GCM under a local 256-bit master key (the local stack's stand-in for KMS)."""

    def __init__(self, master_key: bytes) -> None:
        if len(master_key) != 32:
            raise ValueError("local master key must be 32 bytes")
        self._master = _aesgcm(master_key)

    def new_data_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        key = os.urandom(32)  # what AESGCM.generate_key(bit_length=256) returns
        nonce = os.urandom(12)
        return key, nonce + self._master.encrypt(nonce, key, _aad(context))

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        try:
            return self._master.decrypt(wrapped[:12], wrapped[12:], _aad(context))
        except (_invalid_tag(), ValueError) as exc:
            raise DecryptionFailed(say("stored_secret.undecryptable")) from exc


class Envelope:
    def __init__(self, keys: KeyProvider) -> None:
        self._keys = keys

    def encrypt(self, plaintext: str | bytes, context: dict[str, str]) -> str:
        data = plaintext.encode() if isinstance(plaintext, str) else plaintext
        key, wrapped = self._keys.new_data_key(context)
        nonce = os.urandom(12)
        sealed = _aesgcm(key).encrypt(nonce, data, _aad(context))
        return ".".join(["v1", _b64e(wrapped), _b64e(nonce), _b64e(sealed)])

    def decrypt(self, blob: str, context: dict[str, str]) -> bytes:
        try:
            version, wrapped, nonce, sealed = blob.split(".")
            if version != "v1":
                raise ValueError(version)
            parts = _b64d(wrapped), _b64d(nonce), _b64d(sealed)
        except ValueError as exc:
            raise DecryptionFailed(say("stored_secret.malformed")) from exc
        key = self._keys.unwrap(parts[0], context)
        try:
            return _aesgcm(key).decrypt(parts[1], parts[2], _aad(context))
        except (_invalid_tag(), ValueError) as exc:
            raise DecryptionFailed(say("stored_secret.undecryptable")) from exc

    def decrypt_text(self, blob: str, context: dict[str, str]) -> str:
        return self.decrypt(blob, context).decode()
