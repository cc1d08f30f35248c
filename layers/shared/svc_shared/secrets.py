"""Secrets read at run time from Secrets Manager (cached for a few minutes), never from plain parameters.

Read with the shared lean botocore client (svc_shared.aws) rather than Powertools' parameters utility, whose
import (boto3 and its resources, about 90 ms) would land on the first request of every function that needs
a secret, /mcp's signing key among them."""

from __future__ import annotations

import hashlib
import threading
import time

MAX_AGE = 300  # seconds a secret is reused before it is read again (a rotation reaches every container)
_cache: dict[str, tuple[float, str]] = {}
_lock = threading.Lock()


def get_secret(arn: str) -> str:
    now = time.monotonic()
    cached = _cache.get(arn)
    if cached is not None and now - cached[0] < MAX_AGE:
        return cached[1]
    from svc_shared import aws

    answer = aws.client("secretsmanager").get_secret_value(SecretId=arn)
    value = answer.get("SecretString")
    if value is None:
        value = bytes(answer["SecretBinary"]).decode()
    with _lock:
        _cache[arn] = (now, value)
    return value


def reset() -> None:
    """Forget cached secrets (tests that replace them)."""
    with _lock:
        _cache.clear()


def derived_key(arn: str, purpose: str) -> bytes:
    """A 256-bit key for one purpose, derived from the secret so one secret can serve several uses."""
    return hashlib.sha256(f"{purpose}:".encode() + get_secret(arn).encode()).digest()
