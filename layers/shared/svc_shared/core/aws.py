"""Lazily created AWS clients, one per service per container (held by the services object).

The clients are botocore's, made from one botocore session: boto3 adds nothing the functions use but
s3transfer's import (about 30 ms of every cold start). Nothing is imported until a client is first asked
for. The endpoint comes from botocore's `AWS_ENDPOINT_URL` setting, which the local stack points at the
embedded AWS.

The session's data loader knows only the services below. Stock botocore, creating its first client, lists
every one of its ~440 service directories to check that the name exists, and parses its 1.2 MB
`endpoints.json` with an OrderedDict per object; together that was about 45 ms of each function's first
AWS call. Ours answers the service list from `SERVICES` and finds `endpoints.json` first in `botocore_data/`:
botocore's own file cut down to these services (every partition kept, each service's entry verbatim),
written by `python -m svc_local.botodata` and checked against the installed botocore by the unit tests.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

# The botocore service names this package creates clients for.
SERVICES = ("cloudformation", "dynamodb", "kms", "s3", "secretsmanager", "sqs", "stepfunctions")
DATA_DIR = Path(__file__).with_name("botocore_data")


def _new_session() -> Any:
    import botocore.session
    from botocore.loaders import Loader

    class ServiceLoader(Loader):
        def list_available_services(self, type_name: str) -> list[str]:
            return list(SERVICES)

    session = botocore.session.get_session()
    session.register_component("data_loader", ServiceLoader(extra_search_paths=[str(DATA_DIR)]))
    return session


class AwsClients:
    """The AWS clients of one container, one per service, made from one botocore session (service models are
    loaded once). The services object holds one; a new one starts afresh (tests change endpoints)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session: Any = None
        self._clients: dict[str, Any] = {}

    def client(self, service: str) -> Any:
        """The shared client for `service` (thread-safe creation; clients themselves are thread-safe)."""
        found = self._clients.get(service)
        if found is not None:
            return found
        if service not in SERVICES:
            raise ValueError(f"no AWS client for {service!r}: add it to svc_shared.core.aws.SERVICES")
        with self._lock:
            if service not in self._clients:
                from botocore.config import Config

                if self._session is None:
                    self._session = _new_session()
                options: dict[str, Any] = {
                    "retries": {"mode": "standard", "max_attempts": 3},
                    "connect_timeout": 3,
                }
                if service == "s3":
                    options["signature_version"] = (
                        "s3v4"  # presigned URLs with X-Amz-Expires and signed headers
                    )
                self._clients[service] = self._session.create_client(service, config=Config(**options))
            return self._clients[service]
