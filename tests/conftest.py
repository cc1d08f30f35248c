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
    """The local stack's embedded AWS (moto behind our middleware) on a free port, shared by the session;
    each test gets fresh tables."""
    from svc_local.aws import EmbeddedAws

    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    server = EmbeddedAws(port=0, persist=False)
    server.start()
    endpoint = server.endpoint_url
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    from svc_shared import aws

    aws.reset_clients()
    yield endpoint
    server.stop()


@pytest.fixture(scope="session")
def table_specs():
    """Every DynamoDB table of template.yaml, by logical id."""
    from svc_local.template import Template

    return {spec.logical_id: spec for spec in Template(TEMPLATE).tables()}


@pytest.fixture
def app_env(moto_endpoint: str, table_specs, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A fresh app table (from template.yaml), session secret and settings for the functions."""
    from svc_shared import services

    suffix = uuid.uuid4().hex[:8]
    names = {logical: f"{spec.table_name}-{suffix}" for logical, spec in table_specs.items()}
    table_name = names["AppTable"]
    from svc_shared import aws

    dynamodb = aws.client("dynamodb")
    for logical, spec in table_specs.items():
        dynamodb.create_table(**{**spec.create_kwargs, "TableName": names[logical]})
    secret = aws.client("secretsmanager").create_secret(
        Name=f"session-{table_name}", SecretString=uuid.uuid4().hex
    )
    sm = aws.client("secretsmanager")
    webhook_secret = f"whsec_{uuid.uuid4().hex}"
    checkout_webhook = sm.create_secret(Name=f"checkout-webhook-{table_name}", SecretString=webhook_secret)
    env = {
        "PUBLIC_BASE_URL": "http://127.0.0.1:3000",
        "TABLE_NAME": table_name,
        "TOKENS_TABLE_NAME": names["OAuthTokensTable"],
        "UPLOADS_BUCKET": "uploads",
        "LOCAL_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
        "SESSION_SECRET_ARN": secret["ARN"],
        "SVC_ENV": "dev",
        "CHECKOUT_WEBHOOK_SECRET_ARN": checkout_webhook["ARN"],
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KMS_KEY_ID", raising=False)
    services.use_clock(None)
    yield {**env, "dynamodb": dynamodb, "checkout_webhook_secret": webhook_secret}
    services.use_clock(None)
    for name in names.values():
        dynamodb.delete_table(TableName=name)


@pytest.fixture
def clock(app_env: dict[str, Any]):
    import time

    from svc_shared import services
    from svc_shared.clock import FrozenClock

    frozen = FrozenClock(start=float(int(time.time())))
    services.use_clock(frozen)
    return frozen


@pytest.fixture(scope="session")
def _platform_routes():
    from apiclient import ApiClient

    return ApiClient(TEMPLATE)


@pytest.fixture
def api(app_env: dict[str, Any], _platform_routes):
    """An in-process client of the platform API (handlers called with real proxy events)."""
    import copy

    client = copy.copy(_platform_routes)
    client.cookies = {}
    return client


@pytest.fixture
def demo_user(app_env: dict[str, Any]):
    from svc_shared import services

    return services.accounts().create_user(
        email="demo@example.com", password="demo-password-1", display_name="Demo", plan="paid"
    )


@pytest.fixture
def bearer(api, demo_user) -> dict[str, str]:
    """Headers of an MCP request authorized as the demo user through the real OAuth flow."""
    from apiclient import authorize_client

    tokens = authorize_client(api, "demo@example.com", "demo-password-1")
    api.cookies.clear()
    return {
        "Authorization": f"Bearer {tokens['access_token']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
