"""Random tokens, their storage hashes, and compact HMAC-signed payloads (cookies, state tokens)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any


def new_token(nbytes: int = 32) -> str:
    """An unguessable URL-safe token."""
    return secrets.token_urlsafe(nbytes)


def hash_token(token: str) -> str:
    """The SHA-256 hex digest under which a secret token is stored (never the token itself)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class BadSignature(Exception):
    """A signed value was tampered with, truncated, signed with another key or for another purpose."""


def sign(payload: dict[str, Any], key: bytes, purpose: str) -> str:
    """`payload` as `<base64url json>.<base64url HMAC-SHA256>`; the purpose is part of the MAC."""
    body = _b64e(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    mac = hmac.new(key, f"{purpose}.{body}".encode(), hashlib.sha256).digest()
    return f"{body}.{_b64e(mac)}"


def unsign(value: str, key: bytes, purpose: str) -> dict[str, Any]:
    body, sep, mac = value.rpartition(".")
    if not sep or not body:
        raise BadSignature("malformed")
    expected = hmac.new(key, f"{purpose}.{body}".encode(), hashlib.sha256).digest()
    try:
        given = _b64d(mac)
        if not hmac.compare_digest(given, expected):
            raise BadSignature("signature mismatch")
        payload = json.loads(_b64d(body))
    except (ValueError, TypeError) as exc:
        raise BadSignature("malformed") from exc
    if not isinstance(payload, dict):
        raise BadSignature("malformed")
    return payload
