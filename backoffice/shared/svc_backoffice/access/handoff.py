"""Single sign-on hand-off from the platform to the backoffice.

The platform (which alone holds the private key) mints a short-lived JWT and sends the staff member's browser
to `GET /auth/sso?token=<jwt>&next=/path`. The backoffice holds only public keys, a set so the platform can
rotate its key (self-hosted: the PEM blocks of HANDOFF_PUBLIC_KEY, current first; hosted: the Shop's
handoff_public_keys), and checks:

  kid  when the header has one, the key whose RFC 7638 thumbprint it is (`key_id`); an unknown kid is
       refused. Without a kid, each key of the set in turn
  alg  EdDSA (Ed25519) or ES256 (P-256), whichever that public key is
  iss  HANDOFF_ISSUER (default `svc-platform`)
  aud  this backoffice's public base URL (self-hosted HANDOFF_AUDIENCE; hosted the Shop's base_url)
  sub  the staff member's email
  role viewer | editor | admin | owner: used only when the email has no staff row yet (first sign-in);
       an existing row keeps the role managed in the backoffice. `invitee`: the platform vouches for the
       email only (its holder is neither the project's owner nor in its workspace), so the person gets in
       only with an invitation (a staff row for that email, written by an admin or owner), in its role
  iat, exp  exp - iat <= 60 s, and not expired (5 s leeway for clock skew)
  jti  unique id; recorded in `sso_handoffs` on first use, a second use is refused
  acct, aep  optional: the platform account's id and session epoch; the session names them, and a hosted shop
       asks the platform on each request whether that account still has access (Shop.account_access)
  bnd  optional: the SHA-256 (hex) of the `svc_handoff` cookie the platform gave the browser that asked; a
       hosted shop (on the platform's origin) requires it and that cookie, so a hand-off minted for one
       browser signs in no other (login CSRF)
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt

from svc_backoffice.access.roles import ROLE_RANK
from svc_backoffice.data.db import Database

MAX_LIFETIME_SECONDS = 60
LEEWAY_SECONDS = 5


INVITEE = "invitee"
BINDING_COOKIE = "svc_handoff"


def binding_digest(value: str) -> str:
    """What a hand-off's `bnd` claim holds for the binding cookie `value`."""
    return hashlib.sha256(value.encode()).hexdigest()


def bound_to(claims: Handoff, cookie: str | None) -> bool:
    """Whether the browser presenting the hand-off holds the cookie it was minted for."""
    return bool(claims.binding and cookie) and hmac.compare_digest(
        binding_digest(cookie or ""), claims.binding or ""
    )


class HandoffRejected(Exception):
    """The hand-off token is not acceptable; the reason is for logs, never for the browser."""


class NotInvited(HandoffRejected):
    """A valid hand-off for a person this store has not invited (or whose invitation was withdrawn)."""


@dataclass(frozen=True)
class Handoff:
    email: str
    role: str
    jti: str
    expires_at: int
    account: str | None = None
    account_epoch: int = 0
    binding: str | None = None


def encode(
    private_key: Any,
    *,
    issuer: str,
    audience: str,
    email: str,
    role: str,
    jti: str,
    lifetime: int = MAX_LIFETIME_SECONDS,
    now: float | None = None,
    algorithm: str = "EdDSA",
    kid: str | None = None,
    account: str | None = None,
    account_epoch: int = 0,
    binding: str | None = None,
) -> str:
    """Mint a hand-off token (the platform side, and tests); `kid` is key_id() of the signing key's public
    half."""
    issued = int(time.time() if now is None else now)
    claims = {
        "iss": issuer,
        "aud": audience,
        "sub": email,
        "role": role,
        "jti": jti,
        "iat": issued,
        "exp": issued + lifetime,
        **({"acct": account, "aep": account_epoch} if account is not None else {}),
        **({"bnd": binding_digest(binding)} if binding is not None else {}),
    }
    return jwt.encode(claims, private_key, algorithm=algorithm, headers={"kid": kid} if kid else None)


# -- keys ----------------------------------------------------------------------------------------------------
_PEM_BLOCK = re.compile(r"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.S)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass(frozen=True)
class VerificationKey:
    kid: str
    algorithm: str
    key: Any  # the loaded public key object


@functools.lru_cache(maxsize=64)
def load_key(public_pem: str) -> VerificationKey:
    """A PEM public key (Ed25519 or P-256), loaded once, with its kid and the one algorithm it verifies."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key

    key = load_pem_public_key(public_pem.strip().encode())
    if isinstance(key, ed25519.Ed25519PublicKey):
        x = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
        members = {"crv": "Ed25519", "kty": "OKP", "x": _b64url(x)}
        algorithm = "EdDSA"
    elif isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
        numbers = key.public_numbers()
        members = {
            "crv": "P-256",
            "kty": "EC",
            "x": _b64url(numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.y.to_bytes(32, "big")),
        }
        algorithm = "ES256"
    else:
        raise ValueError("a hand-off key is Ed25519 or P-256")
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return VerificationKey(kid=_b64url(hashlib.sha256(canonical).digest()), algorithm=algorithm, key=key)


def key_id(public_pem: str) -> str:
    """The RFC 7638 JWK thumbprint of a public key (SHA-256 of its required JWK members, base64url without
    padding): the `kid` the platform puts in the header of the hand-offs it signs with the matching key."""
    return load_key(public_pem).kid


def split_pem_blocks(text: str) -> tuple[str, ...]:
    """The PEM public keys in one value (HANDOFF_PUBLIC_KEY may hold several, the current one first)."""
    return tuple(_PEM_BLOCK.findall(text))


def verify(
    token: str, *, public_keys: Sequence[str], issuer: str, audience: str, now: float | None = None
) -> Handoff:
    """The hand-off's claims when `token` verifies with one of `public_keys`; HandoffRejected otherwise."""
    try:
        keys = [load_key(pem) for pem in public_keys]
    except ValueError as exc:
        raise HandoffRejected(f"unusable hand-off key: {exc}") from None
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.PyJWTError as exc:
        raise HandoffRejected(f"invalid token: {exc}") from exc
    if kid is not None:
        keys = [k for k in keys if k.kid == kid]
        if not keys:
            raise HandoffRejected("no hand-off key with that kid")
    if not keys:
        raise HandoffRejected("no hand-off key configured")
    failure: Exception | None = None
    for key in keys:
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[key.algorithm],
                audience=audience,
                issuer=issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["iss", "aud", "sub", "exp", "iat", "jti"]},
            )
            break
        except (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError) as exc:
            failure = exc  # another key of the set may have signed it
        except jwt.PyJWTError as exc:
            raise HandoffRejected(f"invalid token: {exc}") from exc
    else:
        raise HandoffRejected(f"invalid token: {failure}")
    # PyJWT checks exp against the wall clock; `now` lets tests pin the lifetime rule independently.
    current = time.time() if now is None else now
    exp, iat = int(claims["exp"]), int(claims["iat"])
    if exp - iat > MAX_LIFETIME_SECONDS:
        raise HandoffRejected("token lifetime exceeds 60 seconds")
    if iat > current + LEEWAY_SECONDS or exp < current - LEEWAY_SECONDS:
        raise HandoffRejected("token not valid now")
    role = claims.get("role")
    if role not in ROLE_RANK and role != INVITEE:
        raise HandoffRejected("unknown role")
    email, jti = str(claims["sub"]).strip(), str(claims["jti"])
    if "@" not in email or not 8 <= len(jti) <= 200:
        raise HandoffRejected("malformed sub or jti")
    account, account_epoch = claims.get("acct"), claims.get("aep", 0)
    if account is not None and (not isinstance(account, str) or not 1 <= len(account) <= 128):
        raise HandoffRejected("malformed acct")
    if isinstance(account_epoch, bool) or not isinstance(account_epoch, int):
        raise HandoffRejected("malformed aep")
    binding = claims.get("bnd")
    if binding is not None and (not isinstance(binding, str) or len(binding) != 64):
        raise HandoffRejected("malformed bnd")
    return Handoff(
        email=email,
        role=str(role),
        jti=jti,
        expires_at=exp,
        account=account,
        account_epoch=account_epoch,
        binding=binding,
    )


def consume(db: Database, handoff: Handoff) -> None:
    """Record the jti; a jti seen before means a replay. The rows of hand-offs past their expiry (and the
    leeway) go at each sign-in: verify refuses those tokens anyway, so their jti need not be kept."""
    db.all("DELETE FROM sso_handoffs WHERE expires_at < now() - make_interval(secs => %s)", (LEEWAY_SECONDS,))
    row = db.one(
        "INSERT INTO sso_handoffs (jti, email, expires_at) VALUES (%s, %s, to_timestamp(%s)) "
        "ON CONFLICT (jti) DO NOTHING RETURNING jti",
        (handoff.jti, handoff.email, handoff.expires_at),
    )
    if row is None:
        raise HandoffRejected("token already used")
