"""PKCE (RFC 7636) with the S256 method, the only one this server accepts."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
_VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def valid_challenge(challenge: object) -> bool:
    return isinstance(challenge, str) and bool(_CHALLENGE.match(challenge))


def verifier_matches(verifier: str, challenge: str) -> bool:
    """Whether `verifier` is a well-formed code_verifier whose S256 is `challenge` (compared in constant time)."""
    return bool(_VERIFIER.match(verifier)) and hmac.compare_digest(s256(verifier), challenge)
