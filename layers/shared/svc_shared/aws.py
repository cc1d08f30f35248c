"""Lazily created AWS clients, one per service per container.

The clients are botocore's, made from one botocore session: boto3 adds nothing the functions use but
s3transfer's import (about 30 ms of every cold start). Nothing is imported until a client is first asked
for. The endpoint comes from botocore's `AWS_ENDPOINT_URL` setting, which the local stack points at the
embedded AWS.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_clients: dict[str, Any] = {}
_session: list[Any] = []  # one boto3 session: service models are loaded once per container


def client(service: str) -> Any:
    """The shared client for `service` (thread-safe creation; clients themselves are thread-safe)."""
    found = _clients.get(service)
    if found is not None:
        return found
    with _lock:
        if service not in _clients:
            import botocore.session
            from botocore.config import Config

            if not _session:
                _session.append(botocore.session.get_session())
            options: dict[str, Any] = {
                "retries": {"mode": "standard", "max_attempts": 3},
                "connect_timeout": 3,
            }
            if service == "s3":
                options["signature_version"] = "s3v4"  # presigned URLs with X-Amz-Expires and signed headers
            _clients[service] = _session[0].create_client(service, config=Config(**options))
        return _clients[service]


def reset_clients() -> None:
    """Drop cached clients (tests change endpoints between sessions)."""
    with _lock:
        _clients.clear()
        _session.clear()
