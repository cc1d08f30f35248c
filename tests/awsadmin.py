"""Test setup on the embedded AWS and the shared PostgreSQL server, apart from the code under test: stock boto3
clients (secrets and keys the template would create) and the server the provider sandbox puts its project
databases on. A module of its own, so test modules import it by a name no conftest.py shares."""

from __future__ import annotations

import functools
import os
from typing import Any

SANDBOX_DATABASE_URL = os.environ.get(
    "SVC_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


@functools.cache
def _admin_client(service: str, endpoint: str) -> Any:
    import boto3

    return boto3.session.Session().client(service, endpoint_url=endpoint, region_name="us-east-1")


def admin_client(service: str) -> Any:
    """A stock boto3 client on the embedded AWS the test environment points at (AWS_ENDPOINT_URL)."""
    return _admin_client(service, os.environ["AWS_ENDPOINT_URL"])
