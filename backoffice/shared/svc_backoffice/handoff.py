"""Single sign-on hand-off from the platform to the backoffice.

The platform (which alone holds the private key) mints a short-lived JWT and sends the staff member's browser
to `GET /auth/sso?token=<jwt>&next=/path`. The backoffice holds only the public key (HANDOFF_PUBLIC_KEY) and
checks:

  alg  EdDSA (Ed25519) or ES256 (P-256), whichever the configured public key is
  iss  HANDOFF_ISSUER (default `svc-platform`)
  aud  HANDOFF_AUDIENCE (this backoffice, e.g. its public base URL)
  sub  the staff member's email
  role viewer | editor | admin | owner: used only when the email has no staff row yet (first sign-in);
       an existing row keeps the role managed in the backoffice. `invitee`: the platform vouches for the
       email only (its holder is neither the project's owner nor in its workspace), so the person gets in
       only with an invitation (a staff row for that email, written by an admin or owner), in its role
  iat, exp  exp - iat <= 60 s, and not expired (5 s leeway for clock skew)
  jti  unique id; recorded in `sso_handoffs` on first use, a second use is refused
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import jwt

from svc_backoffice.db import Database
from svc_backoffice.route_table import ROLE_RANK

MAX_LIFETIME_SECONDS = 60
LEEWAY_SECONDS = 5
ALGORITHMS = ["EdDSA", "ES256"]


INVITEE = "invitee"


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
) -> str:
    """Mint a hand-off token (the platform side, and tests)."""
    issued = int(time.time() if now is None else now)
    claims = {
        "iss": issuer,
        "aud": audience,
        "sub": email,
        "role": role,
        "jti": jti,
        "iat": issued,
        "exp": issued + lifetime,
    }
    return jwt.encode(claims, private_key, algorithm=algorithm)


def verify(token: str, *, public_key: str, issuer: str, audience: str, now: float | None = None) -> Handoff:
    try:
        claims = jwt.decode(
            token,
            public_key,
            algorithms=ALGORITHMS,
            audience=audience,
            issuer=issuer,
            leeway=LEEWAY_SECONDS,
            options={"require": ["iss", "aud", "sub", "exp", "iat", "jti"]},
        )
    except jwt.PyJWTError as exc:
        raise HandoffRejected(f"invalid token: {exc}") from exc
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
    return Handoff(email=email, role=str(role), jti=jti, expires_at=exp)


def consume(db: Database, handoff: Handoff) -> None:
    """Record the jti; a jti seen before means a replay."""
    row = db.one(
        "INSERT INTO sso_handoffs (jti, email, expires_at) VALUES (%s, %s, to_timestamp(%s)) "
        "ON CONFLICT (jti) DO NOTHING RETURNING jti",
        (handoff.jti, handoff.email, handoff.expires_at),
    )
    if row is None:
        raise HandoffRejected("token already used")
