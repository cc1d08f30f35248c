"""Fixtures shared by every test layer: embedded AWS (moto server over HTTP), the app table created from
template.yaml, a configured environment for the functions, and a movable clock."""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "template.yaml"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """A moto server on a free port, shared by the session (each test gets fresh tables)."""
    from moto.server import ThreadedMotoServer

    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    yield endpoint
    server.stop()


@pytest.fixture
def app_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A fresh app table (from template.yaml), session secret and settings for the functions."""
    import boto3

    from svc_local.template import Template
    from svc_shared import services

    spec = Template(TEMPLATE).tables()[0]
    table_name = f"{spec.table_name}-{uuid.uuid4().hex[:8]}"
    dynamodb = boto3.client("dynamodb", endpoint_url=moto_endpoint)
    dynamodb.create_table(**{**spec.create_kwargs, "TableName": table_name})
    secret = boto3.client("secretsmanager", endpoint_url=moto_endpoint).create_secret(
        Name=f"session-{table_name}", SecretString=uuid.uuid4().hex
    )
    env = {
        "PUBLIC_BASE_URL": "http://127.0.0.1:3000",
        "TABLE_NAME": table_name,
        "UPLOADS_BUCKET": "uploads",
        "LOCAL_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
        "SESSION_SECRET_ARN": secret["ARN"],
        "SVC_ENV": "dev",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KMS_KEY_ID", raising=False)
    services.use_clock(None)
    yield {**env, "dynamodb": dynamodb}
    services.use_clock(None)
    dynamodb.delete_table(TableName=table_name)


@pytest.fixture
def clock(app_env: dict[str, Any]):
    from svc_shared import services
    from svc_shared.clock import FrozenClock

    import time

    frozen = FrozenClock(start=float(int(time.time())))
    services.use_clock(frozen)
    return frozen


@pytest.fixture
def api(app_env: dict[str, Any]):
    """An in-process client of the platform API (handlers called with real proxy events)."""
    from apiclient import ApiClient

    return ApiClient(TEMPLATE)


@pytest.fixture
def demo_user(app_env: dict[str, Any]):
    from svc_shared import services

    return services.accounts().create_user(
        email="demo@example.com", password="demo-password-1", display_name="Demo", plan="paid"
    )
