"""Secrets read at run time from Secrets Manager (cached for a few minutes), never from plain parameters."""

from __future__ import annotations

import hashlib


def get_secret(arn: str) -> str:
    from aws_lambda_powertools.utilities.parameters import get_secret as _get

    value = _get(arn, max_age=300)
    return value if isinstance(value, str) else bytes(value).decode()


def derived_key(arn: str, purpose: str) -> bytes:
    """A 256-bit key for one purpose, derived from the secret so one secret can serve several uses."""
    return hashlib.sha256(f"{purpose}:".encode() + get_secret(arn).encode()).digest()
