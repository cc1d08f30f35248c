"""Secrets read at run time from Secrets Manager (cached for a few minutes), never from plain parameters.

Read with the shared lean botocore client (svc_shared.core.aws) rather than Powertools' parameters utility, whose
import (boto3 and its resources, about 90 ms) would land on the first request of every function that needs
a secret, /mcp's signing key among them."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import MutableMapping
from typing import Any

MAX_AGE = 300  # seconds a secret is reused before it is read again (a rotation reaches every container)
# A secret's ARN -> (when it was read, its value).
SecretCache = MutableMapping[str, tuple[float, str]]
_lock = threading.Lock()


class _Cache:
    """The cache in use, kept on a class rather than a module global; `use_cache` swaps it."""

    entries: SecretCache = {}


def use_cache(cache: SecretCache) -> SecretCache:
    """Keep the secrets read from now on in `cache`; returns the cache it replaces (to put back). The local stack
    runs every function in one process and gives each one its own cache this way."""
    with _lock:
        previous, _Cache.entries = _Cache.entries, cache
    return previous


_own_clients: list[Any] = []  # for callers that pass no client


def _client() -> Any:
    if not _own_clients:
        from svc_shared.core.aws import AwsClients

        _own_clients.append(AwsClients())
    return _own_clients[0].client("secretsmanager")


def get_secret(arn: str, client: Any = None) -> str:
    """The secret's value; `client` is a Secrets Manager client (the container's, from its services)."""
    now = time.monotonic()
    cached = _Cache.entries.get(arn)
    if cached is not None and now - cached[0] < MAX_AGE:
        return cached[1]
    answer = (client or _client()).get_secret_value(SecretId=arn)
    value = answer.get("SecretString")
    if value is None:
        value = bytes(answer["SecretBinary"]).decode()
    with _lock:
        _Cache.entries[arn] = (now, value)
    return value


def reset() -> None:
    """Forget cached secrets and the module's own client (tests that replace them or the endpoint)."""
    with _lock:
        _Cache.entries.clear()
        _own_clients.clear()


def derived_key(arn: str, purpose: str, client: Any = None) -> bytes:
    """A 256-bit key for one purpose, derived from the secret so one secret can serve several uses."""
    return hashlib.sha256(f"{purpose}:".encode() + get_secret(arn, client).encode()).digest()
