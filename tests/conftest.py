"""Fixtures shared by every test layer: embedded AWS (moto server over HTTP), the app table created from
template.yaml, a configured environment for the functions, and a movable clock."""

from __future__ import annotations

import base64
import functools
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from awsadmin import SANDBOX_DATABASE_URL, admin_client

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "template.yaml"

pytest_plugins = ["walks"]  # idle unless SVC_WALK names a handler (tests/walks.py)


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """The local stack's embedded AWS (moto behind our middleware) on a free port, shared by the session;
    each test gets fresh tables."""
    from svc_local.aws import EmbeddedAws, create_state_machine

    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    from svc_local.runtime import FunctionRegistry
    from svc_local.template import Template

    template = Template(TEMPLATE)
    # Lambda Invoke on this endpoint runs our handlers, so the publish state machine really executes.
    server = EmbeddedAws(port=0, persist=False, registry=FunctionRegistry(template.functions()))
    server.start()
    endpoint = server.endpoint_url
    for machine in template.state_machines():
        create_state_machine(server.client("stepfunctions"), machine)
        os.environ["PUBLISH_STATE_MACHINE_ARN"] = machine.arn
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    from svc_shared.wiring import services

    services.wire()  # new AWS clients, on this endpoint
    yield endpoint
    server.stop()


@functools.cache
def _state_machines():
    from svc_local.template import Template

    return Template(TEMPLATE).state_machines()


@pytest.fixture(scope="session")
def table_specs():
    """Every DynamoDB table of template.yaml, by logical id."""
    from svc_local.template import Template

    return {spec.logical_id: spec for spec in Template(TEMPLATE).tables()}


@pytest.fixture
def app_env(moto_endpoint: str, table_specs, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A fresh app table (from template.yaml), session secret and settings for the functions."""
    from svc_local.aws import create_state_machine
    from svc_shared.wiring import services

    # moto's state is global to the process: another embedded AWS started by a test resets it, so the state
    # machine is (re)created when missing.
    sfn = admin_client("stepfunctions")
    existing = {m["name"] for m in sfn.list_state_machines()["stateMachines"]}
    for machine in _state_machines():
        if machine.name not in existing:
            create_state_machine(sfn, machine)
    suffix = uuid.uuid4().hex[:8]
    names = {logical: f"{spec.table_name}-{suffix}" for logical, spec in table_specs.items()}
    table_name = names["AppTable"]
    dynamodb = admin_client("dynamodb")
    for logical, spec in table_specs.items():
        dynamodb.create_table(**{**spec.create_kwargs, "TableName": names[logical]})
    sm = admin_client("secretsmanager")
    secret = sm.create_secret(Name=f"session-{table_name}", SecretString=uuid.uuid4().hex)
    bucket = f"uploads-{suffix}"
    admin_client("s3").create_bucket(Bucket=bucket)
    queue_url = admin_client("sqs").create_queue(QueueName=f"analytics-{suffix}")["QueueUrl"]
    webhook_secret = f"whsec_{uuid.uuid4().hex}"
    checkout_webhook = sm.create_secret(Name=f"checkout-webhook-{table_name}", SecretString=webhook_secret)
    env = {
        "PUBLIC_BASE_URL": "http://127.0.0.1:3000",
        "TABLE_NAME": table_name,
        "TOKENS_TABLE_NAME": names["OAuthTokensTable"],
        "UPLOADS_BUCKET": bucket,
        "LOCAL_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
        "SESSION_SECRET_ARN": secret["ARN"],
        "SVC_ENV": "dev",
        "CHECKOUT_WEBHOOK_SECRET_ARN": checkout_webhook["ARN"],
        "PUBLISH_STATE_MACHINE_ARN": os.environ.get("PUBLISH_STATE_MACHINE_ARN", ""),
        "ANALYTICS_QUEUE_URL": queue_url,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KMS_KEY_ID", raising=False)
    services.wire()
    yield {**env, "dynamodb": dynamodb, "checkout_webhook_secret": webhook_secret}
    services.wire()
    for name in names.values():
        dynamodb.delete_table(TableName=name)


@pytest.fixture
def clock(app_env: dict[str, Any]):
    import time

    from svc_shared.core.clock import FrozenClock
    from svc_shared.wiring import services

    frozen = FrozenClock(start=float(int(time.time())))
    services.wire(clock=frozen)
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
    from svc_shared.wiring import services

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


@pytest.fixture(scope="session")
def sandbox_credentials():
    from svc_local.providers import SandboxCredentials

    return SandboxCredentials.generate()


@pytest.fixture(scope="session")
def sandbox(sandbox_credentials, tmp_path_factory):
    """The provider sandbox over real HTTP, shared by the session (db_host projects on the machine's
    PostgreSQL; their databases are dropped at the end)."""
    from svc_local.providers import build_providers
    from svc_local.providers.supabase import Supabase
    from svc_local.sandbox import Sandbox

    providers = build_providers(
        tmp_path_factory.mktemp("sandbox"),
        sandbox_credentials,
        database_url=SANDBOX_DATABASE_URL,
        project_ready_delay=0.3,
        build_delay=0.3,
        builder_delay=0.2,
        rate_limit_per_minute=None,
    )
    with Sandbox("127.0.0.1", 0, providers, quiet=True) as running:
        yield running
    from svc_shared.wiring import services

    services.current().http.close()
    supabase = next(p for p in providers if isinstance(p, Supabase))
    import psycopg

    with psycopg.connect(SANDBOX_DATABASE_URL, autocommit=True) as conn:
        for project in supabase.data["projects"].values():
            conn.execute(f'DROP DATABASE IF EXISTS "{project["database"]}" WITH (FORCE)')
            conn.execute(f'DROP ROLE IF EXISTS "{project["database"]}"')  # its own role


@pytest.fixture
def provider_env(app_env, sandbox, sandbox_credentials, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """app_env plus the provider settings pointing at the sandbox, with the client secrets and keys stored in
    the embedded Secrets Manager as in the local stack."""
    from svc_local.providers import base_urls
    from svc_shared.wiring import services

    creds = sandbox_credentials
    secrets = admin_client("secretsmanager")
    suffix = app_env["TABLE_NAME"]
    env = dict(base_urls(sandbox.url))
    for setting, value in {
        "REPO_HOST_CLIENT_SECRET_ARN": creds.repo_host_client_secret,
        "DB_HOST_CLIENT_SECRET_ARN": creds.db_host_client_secret,
        "STATIC_HOST_CLIENT_SECRET_ARN": creds.static_host_client_secret,
        "CHECKOUT_SECRET_KEY_ARN": creds.checkout_secret_key,
        "BUILDER_API_KEY_ARN": creds.builder_api_key,
    }.items():
        env[setting] = secrets.create_secret(Name=f"{setting}-{suffix}", SecretString=value)["ARN"]
    env |= {
        "REPO_HOST_CLIENT_ID": creds.repo_host_client_id,
        "DB_HOST_CLIENT_ID": creds.db_host_client_id,
        "STATIC_HOST_CLIENT_ID": creds.static_host_client_id,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    services.wire(clock=services.clock())  # the settings of the environment just set, on the same clock
    return {**app_env, **env, "sandbox": sandbox}
