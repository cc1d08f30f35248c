"""Backoffice fixtures: a fresh PostgreSQL database migrated by the runner (once per session), a rolled-back
transaction per test, configuration with a real Ed25519 hand-off key, signed-in staff of every role, and
API Gateway REST proxy events routed to the function the route table names."""

from __future__ import annotations

import base64
import html
import importlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from svc_backoffice.access import sessions
from svc_backoffice.core import config
from svc_backoffice.data import migrate
from svc_backoffice.data.db import Database, use_database
from svc_backoffice.domain import store
from svc_backoffice.routers import table as route_table


# -- events -------------------------------------------------------------------------------------------------
def build_event(
    method: str,
    path: str,
    *,
    body: Any = None,
    raw_body: str | None = None,
    headers: dict[str, str] | None = None,
    resource: str | None = None,
) -> dict[str, Any]:
    """A REST (v1) proxy event; `path` may carry a query string."""
    parts = urlsplit(path)
    query = parse_qsl(parts.query, keep_blank_values=True)
    text = raw_body if raw_body is not None else (None if body is None else json.dumps(body))
    all_headers = {
        "Host": "backoffice.test",
        # What a client of this JSON API sends: writes declare JSON even without a body (a DELETE needs not).
        **({"Content-Type": "application/json"} if text or method in ("POST", "PUT", "PATCH") else {}),
        **(headers or {}),
    }
    multi_query: dict[str, list[str]] = {}
    for k, v in query:
        multi_query.setdefault(k, []).append(v)
    return {
        "resource": resource or parts.path,
        "path": parts.path,
        "httpMethod": method,
        "headers": all_headers,
        "multiValueHeaders": {k: [v] for k, v in all_headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource or parts.path,
            "httpMethod": method,
            "path": f"/live{parts.path}",
            "stage": "live",
            "requestId": str(uuid.uuid4()),
            "identity": {"sourceIp": "127.0.0.1", "userAgent": "pytest"},
            "accountId": "123456789012",
            "apiId": "backoffice",
        },
        "body": text,
        "isBase64Encoded": False,
    }


@dataclass
class LambdaContext:
    function_name: str = "backoffice-test"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:backoffice-test"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    cookies: list[str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")


def _pattern(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\[(id|slug)\\\]", "[^/]+", re.escape(path)) + "$")


_TABLE = [(_pattern(r.path), r) for r in (*route_table.ROUTES, *route_table.AUTH_ROUTES)]


def function_for(method: str, path: str) -> str:
    """The function module serving `path` (static paths win over [id], like API Gateway; a path no API
    route names is the admin screens', as the template's /{proxy+} event sends it)."""
    matches = [r for pattern, r in _TABLE if pattern.match(path)]
    matches.sort(key=lambda r: ("[" in r.path, r.method != method))
    if not matches:
        return "catalog" if path.startswith("/api/") else "admin"
    route = matches[0]
    return "auth" if route.resource == "auth" else (route_table.function_of(route) or "catalog")


def invoke(method: str, path: str, **kwargs: Any) -> Answer:
    module = importlib.import_module(f"backoffice.functions.{function_for(method, urlsplit(path).path)}.app")
    return answer_of(module.handler(build_event(method, path, **kwargs), LambdaContext()))


def sso(link: str) -> Answer:
    """A self-hosted hand-off link opened as a browser does: its page naming the account, then its Continue
    button (the form posted with the cookie the page set). A link refused outright is that answer."""
    page = invoke("GET", link)
    if page.status != 200:
        return page
    fields = dict(re.findall(r'<input type=hidden name=(\w+) value="([^"]*)">', page.body))
    nonce = next(
        c.split(";", 1)[0].split("=", 1)[1] for c in page.cookies if c.startswith("svc_sso_confirm=")
    )
    form = urlencode({name: html.unescape(value) for name, value in fields.items()})
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"svc_sso_confirm={nonce}"}
    return invoke("POST", "/auth/sso", raw_body=form, headers=headers)


def answer_of(result: dict[str, Any]) -> Answer:
    """A proxy result as the client sees it."""
    multi = result.get("multiValueHeaders") or {}
    headers = {**{k: v[-1] for k, v in multi.items() if v}, **(result.get("headers") or {})}
    return Answer(
        status=result["statusCode"],
        headers=headers,
        cookies=list(multi.get("Set-Cookie", [])),
        body=result.get("body") or "",
    )


# -- fixtures -----------------------------------------------------------------------------------------------
ADMIN_URL = os.environ.get("BACKOFFICE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
AUDIENCE = "https://shop.example/backoffice"
ISSUER = "svc-platform"
FIELD_KEY = base64.b64encode(bytes(range(32))).decode()


@contextmanager
def migrated_database(prefix: str = "bo_test", migrations: Any = None) -> Iterator[str]:
    """A fresh database on the test server with every migration applied (or only `migrations`); dropped
    afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            migrate.migrate(migrate.psycopg_executor(conn), migrations)
        yield url
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    with migrated_database() as url:
        yield url


@pytest.fixture(scope="session")
def handoff_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture(scope="session")
def session_connection(database_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def db(
    session_connection: psycopg.Connection,
    database_url: str,
    handoff_key: Ed25519PrivateKey,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Database]:
    """The database as the handlers see it, inside a transaction rolled back after the test."""
    public_pem = (
        handoff_key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    env = {
        "DATABASE_URL": database_url,
        "SESSION_SECRET": "s" * 48,
        "HANDOFF_PUBLIC_KEY": public_pem,
        "HANDOFF_AUDIENCE": AUDIENCE,
        "HANDOFF_ISSUER": ISSUER,
        "COOKIE_SECURE": "false",
        "FIELD_ENCRYPTION_KEY": FIELD_KEY,
        "GSC_CLIENT_ID": "gsc-client",
        "GSC_CLIENT_SECRET": "gsc-client-secret",
        # Nothing listens on the discard port; tests of the connect flow point this at the provider sandbox.
        "GSC_PROVIDER_BASE_URL": "http://127.0.0.1:9",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SESSION_SECRET_ARN", raising=False)
    config.reset_settings()
    store.SUGGESTIONS.clear()
    database = Database(connection=session_connection)
    use_database(database)
    with session_connection.transaction(force_rollback=True):
        yield database
    use_database(None)
    config.reset_settings()


@pytest.fixture
def staff(db: Database) -> dict[str, dict[str, Any]]:
    """One member per role (plus a second owner), each with a session cookie header."""
    members = {}
    for key, role in [
        ("viewer", "viewer"),
        ("editor", "editor"),
        ("admin", "admin"),
        ("owner", "owner"),
        ("owner2", "owner"),
    ]:
        row = db.one(
            "INSERT INTO staff (email, name, role, joined_at) VALUES (%s, %s, %s, now()) RETURNING id::text, email, role",
            (f"{key}@shop.example", key.title(), role),
        )
        assert row is not None
        members[key] = {**row, "cookie": f"{sessions.SESSION_COOKIE}={sessions.mint(row['id'])}"}
    return members


class Client:
    def __init__(self, cookie: str | None) -> None:
        self.cookie = cookie

    def request(self, method: str, path: str, **kwargs: Any) -> Answer:
        headers = dict(kwargs.pop("headers", None) or {})
        if self.cookie:
            headers.setdefault("Cookie", self.cookie)
        return invoke(method, path, headers=headers, **kwargs)

    def get(self, path: str, **kw: Any) -> Answer:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Answer:
        return self.request("POST", path, body=body, **kw)

    def patch(self, path: str, body: Any = None, **kw: Any) -> Answer:
        return self.request("PATCH", path, body=body, **kw)

    def delete(self, path: str, body: Any = None, **kw: Any) -> Answer:
        return self.request("DELETE", path, body=body, **kw)


@pytest.fixture
def as_role(staff: dict[str, dict[str, Any]]):
    """`as_role("editor")` -> a client signed in as that member; `as_role(None)` has no session."""

    def make(key: str | None) -> Client:
        return Client(staff[key]["cookie"] if key else None)

    return make


@pytest.fixture
def editor(as_role) -> Client:
    return as_role("editor")


@pytest.fixture
def viewer(as_role) -> Client:
    return as_role("viewer")


# -- concurrent requests ---------------------------------------------------------------------------------------
def committed_editor(connection: psycopg.Connection) -> str:
    """The id of a new editor, committed through an autocommit `connection` so that concurrent requests,
    each on a connection of its own, see it."""
    row = connection.execute(
        "INSERT INTO staff (email, role) VALUES (%s, 'editor') RETURNING id::text",
        (f"race-{uuid.uuid4().hex[:8]}@shop.example",),
    ).fetchone()
    assert row is not None
    return str(row[0])


@contextmanager
def own_database(database_url: str) -> Iterator[None]:
    """A request thread's own database connection (as each Lambda instance has its own), closed after."""
    own = Database(database_url)
    use_database(own)
    try:
        yield
    finally:
        own.close()


def race_past_a_lock(
    database_url: str, holder: psycopg.Connection, threads: list[threading.Thread], statement: str
) -> None:
    """Start the request `threads`, wait until each is blocked on a lock in a statement naming `statement`
    (the lock `holder`'s open transaction holds: they are provably in the database at once), then commit
    that transaction and wait for the threads to finish."""
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    # A separate autocommit connection: pg_stat_activity is a snapshot inside a transaction.
    with psycopg.connect(database_url, autocommit=True) as monitor:
        while time.monotonic() < deadline:
            waiting = monitor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE %s",
                (f"%{statement}%",),
            ).fetchone()[0]
            if waiting == len(threads):
                break
            time.sleep(0.02)
    assert waiting == len(threads)
    holder.execute("COMMIT")
    for t in threads:
        t.join(10)
