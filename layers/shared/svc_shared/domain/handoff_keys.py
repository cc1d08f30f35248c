"""The Ed25519 keys that sign backoffice hand-offs: made on first use, kept in the app table with the private
half under envelope encryption, rotated by an operator (`svc handoff-keys rotate`). A key retired by a
rotation keeps verifying for a grace period, then leaves the verifying set.

One item holds the whole keyring (`HANDOFF_KEYS` / `KEYRING`), so signing and verifying cost one read, cached
for a minute per instance. Writes are conditional: the first key only if there is no keyring (two instances
racing on first use end with one key), a rotation only on the version it read.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.crypto import Envelope
from svc_shared.core.errors import Conflict
from svc_shared.storage import keys
from svc_shared.storage.dal import Cond, ConditionFailed, Table, attr, item_absent

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PURPOSE = "handoff-signing-key"
# How long an instance reuses the keyring it read. A new key also waits this long before it signs, so every
# instance that verifies (the hosted backoffice caches its shops as long) knows it before the first hand-off.
CACHE_SECONDS = 60


def _b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def thumbprint(x: str) -> str:
    """RFC 7638 JWK thumbprint of an Ed25519 public key (`x`, base64url): the `kid` of its hand-offs."""
    member = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, sort_keys=True, separators=(",", ":"))
    return _b64e(hashlib.sha256(member.encode()).digest())


def public_pem(x: str) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    return (
        Ed25519PublicKey.from_public_bytes(_b64d(x))
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@dataclass(frozen=True)
class HandoffKey:
    kid: str
    x: str  # the raw public key, base64url (the JWK's `x`)
    created_at: int
    retired_at: int | None = None
    sealed: str = field(default="", repr=False)  # the private key, envelope ciphertext

    @property
    def public_pem(self) -> str:
        return public_pem(self.x)

    def stored(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"x": self.x, "private": self.sealed, "created_at": self.created_at}
        if self.retired_at is not None:
            stored["retired_at"] = self.retired_at
        return stored


@dataclass(frozen=True)
class Keyring:
    current: str
    version: int
    keys: dict[str, HandoffKey]

    def verifying(self, now: float, grace: int) -> list[HandoffKey]:
        """The current key, then the retired keys still in their grace period, newest first."""
        retired = [
            k
            for k in self.keys.values()
            if k.kid != self.current and k.retired_at is not None and k.retired_at + grace > now
        ]
        return [self.keys[self.current], *sorted(retired, key=_newest_first)]

    def signing(self, now: float, grace: int) -> HandoffKey:
        """The newest key every verifier has had time to learn (its key set is cached for CACHE_SECONDS): the
        current one once it is that old, else the latest retired one that is, so two rotations in a row never
        sign with a key a shop may not know yet; when none is that old, the current key's predecessor (or the
        current key, the only one)."""
        keys = self.verifying(now, grace)
        fallback = keys[1] if len(keys) > 1 else keys[0]
        return next((key for key in keys if key.created_at + CACHE_SECONDS <= now), fallback)


def _newest_first(key: HandoffKey) -> tuple[float, int]:
    """The current key (never retired) first, then by retirement, the latest first."""
    return (-(key.retired_at if key.retired_at is not None else float("inf")), -key.created_at)


def _context(kid: str) -> dict[str, str]:
    return {"purpose": PURPOSE, "kid": kid}


class HandoffKeys:
    def __init__(
        self, table: Table, envelope: Callable[[], Envelope], clock: Clock, *, grace_seconds: int
    ) -> None:
        self._table = table
        self._envelope = envelope  # built when a key is made or opened (`show` needs no key)
        self._clock = clock
        self._grace = grace_seconds
        self._cached: tuple[float, Keyring] | None = None
        self._private: dict[str, Ed25519PrivateKey] = {}

    # -- reading ---------------------------------------------------------------------------------------------
    def _read(self, *, consistent: bool = False) -> Keyring | None:
        item = self._table.get(keys.HANDOFF_KEYS, keys.KEYRING, consistent=consistent)
        if item is None:
            return None
        found = {
            kid: HandoffKey(
                kid=kid,
                x=str(stored["x"]),
                created_at=int(stored["created_at"]),
                retired_at=int(stored["retired_at"]) if stored.get("retired_at") is not None else None,
                sealed=str(stored["private"]),
            )
            for kid, stored in (item.get("keys") or {}).items()
        }
        keyring = Keyring(current=str(item["current"]), version=int(item["version"]), keys=found)
        self._cached = (self._clock.now(), keyring)
        return keyring

    def _keyring(self, *, create: bool) -> Keyring | None:
        if self._cached is not None and self._clock.now() - self._cached[0] < CACHE_SECONDS:
            return self._cached[1]
        keyring = self._read()
        if keyring is None and create:
            keyring = self._create_first()
        return keyring

    # -- writing ---------------------------------------------------------------------------------------------
    def _new_key(self, now: int) -> HandoffKey:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        private = Ed25519PrivateKey.generate()
        raw = private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        x = _b64e(
            private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )
        kid = thumbprint(x)
        self._private[kid] = private
        return HandoffKey(kid=kid, x=x, created_at=now, sealed=self._envelope().encrypt(raw, _context(kid)))

    def _put(self, keyring: Keyring, when: Cond) -> None:
        self._table.put(
            {
                "pk": keys.HANDOFF_KEYS,
                "sk": keys.KEYRING,
                "current": keyring.current,
                "version": keyring.version,
                "keys": {kid: key.stored() for kid, key in keyring.keys.items()},
            },
            when=when,
        )
        self._cached = (self._clock.now(), keyring)

    def _create_first(self) -> Keyring:
        key = self._new_key(int(self._clock.now()))
        keyring = Keyring(current=key.kid, version=1, keys={key.kid: key})
        try:
            self._put(keyring, item_absent())
        except ConditionFailed:
            # Another instance made the first key a moment ago: use that one.
            self._private.pop(key.kid, None)
            winner = self._read(consistent=True)
            assert winner is not None
            return winner
        return keyring

    def rotate(self) -> HandoffKey:
        """A new current key; the one it replaces keeps verifying for the grace period. Keys whose grace
        period is over are removed from the keyring."""
        now = int(self._clock.now())
        found = self._read(consistent=True)
        if found is None:
            first = self._create_first()
            return first.keys[first.current]
        key = self._new_key(now)
        kept = {
            kid: (old if kid != found.current else replace(old, retired_at=now))
            for kid, old in found.keys.items()
            if kid == found.current or (old.retired_at is not None and old.retired_at + self._grace > now)
        }
        keyring = Keyring(current=key.kid, version=found.version + 1, keys={**kept, key.kid: key})
        try:
            self._put(keyring, attr("version").eq(found.version))
        except ConditionFailed:
            self._cached = None
            raise Conflict(say("handoff.keys_changed")) from None
        return key

    # -- using -----------------------------------------------------------------------------------------------
    def signer(self) -> tuple[str, Ed25519PrivateKey]:
        """(kid, private key) to sign a hand-off with; the first key is made here if there is none yet."""
        keyring = self._keyring(create=True)
        assert keyring is not None
        key = keyring.signing(self._clock.now(), self._grace)
        if key.kid not in self._private:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

            raw = self._envelope().decrypt(key.sealed, _context(key.kid))
            self._private[key.kid] = Ed25519PrivateKey.from_private_bytes(raw)
        return key.kid, self._private[key.kid]

    def public_keys(self) -> tuple[str, ...]:
        """PEM public keys that verify hand-offs now, current first (none before the first hand-off)."""
        keyring = self._keyring(create=False)
        if keyring is None:
            return ()
        return tuple(k.public_pem for k in keyring.verifying(self._clock.now(), self._grace))

    def listing(self) -> list[dict[str, Any]]:
        """Every stored key without private material: kid, times, and whether it is current or verifying."""
        keyring = self._read(consistent=True)
        if keyring is None:
            return []
        now = self._clock.now()
        verifying = {k.kid for k in keyring.verifying(now, self._grace)}
        signing = keyring.signing(now, self._grace).kid
        return [
            {
                "kid": k.kid,
                "created_at": k.created_at,
                "retired_at": k.retired_at,
                "verifies_until": None if k.retired_at is None else k.retired_at + self._grace,
                "current": k.kid == keyring.current,
                "signing": k.kid == signing,
                "verifying": k.kid in verifying,
            }
            for k in sorted(keyring.keys.values(), key=_newest_first)
        ]
