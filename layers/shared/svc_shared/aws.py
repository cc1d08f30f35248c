"""Lazily created boto3 clients, one per service per container.

boto3 costs ~150 ms to import, so nothing here imports it until a client is first asked for. The endpoint
comes from boto3's own `AWS_ENDPOINT_URL` setting, which the local stack points at the embedded AWS.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_clients: dict[str, Any] = {}
_session: list[Any] = []  # one boto3 session: service models are loaded once per container


def client(service: str) -> Any:
    """The shared boto3 client for `service` (thread-safe creation; clients themselves are thread-safe)."""
    found = _clients.get(service)
    if found is not None:
        return found
    with _lock:
        if service not in _clients:
            import boto3
            from botocore.config import Config

            if not _session:
                _session.append(boto3.session.Session())
            options: dict[str, Any] = {
                "retries": {"mode": "standard", "max_attempts": 3},
                "connect_timeout": 3,
            }
            if service == "s3":
                options["signature_version"] = "s3v4"  # presigned URLs with X-Amz-Expires and signed headers
            _clients[service] = _session[0].client(service, config=Config(**options))
        return _clients[service]


def reset_clients() -> None:
    """Drop cached clients (tests change endpoints between sessions)."""
    with _lock:
        _clients.clear()
        _session.clear()
