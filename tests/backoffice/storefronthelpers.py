"""Storefront test fixtures: a hosted shop on its own committed database, served over real HTTP (the hosted
backoffice behind a small HTTP front, as the platform's gateway serves /shops/<id>), the card provider sandbox
over real HTTP, a build-hook receiver, and catalog rows written straight into the shop's database."""

from __future__ import annotations

import base64
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import psycopg
import pytest
from bohelpers import Answer, LambdaContext, answer_of, build_event, migrated_database

from svc_backoffice.access import sessions
from svc_backoffice.core import config, tenancy
from svc_backoffice.core.tenancy import Shop
from svc_backoffice.data import db
from svc_backoffice.domain import storefront_settings
from svc_backoffice.hosting import shops as hosting
from svc_local.providers import SandboxCredentials, build_providers
from svc_local.sandbox import Sandbox

LIVE = "https://coffee.example"
SELF_HOSTED_VARIABLES = (
    "DATABASE_URL",
    "SESSION_SECRET",
    "HANDOFF_PUBLIC_KEY",
    "HANDOFF_AUDIENCE",
    "FIELD_ENCRYPTION_KEY",
    "COOKIE_SECURE",
)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # twenty shoppers at once must all get through
    daemon_threads = True


class _Front:
    """Serves hosted shops over HTTP at /shops/<id>/..., each request through hosting.handle."""

    def __init__(self) -> None:
        self.shops: dict[str, Shop] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "surrogateescape") if length else None
                parts = self.path.split("/", 3)
                shop = outer.shops.get(parts[2]) if len(parts) > 2 and parts[1] == "shops" else None
                if shop is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                event = build_event(
                    self.command,
                    "/" + (parts[3] if len(parts) > 3 else ""),
                    raw_body=raw,
                    headers={k: v for k, v in self.headers.items() if k.lower() != "content-length"},
                )
                event["requestContext"]["identity"]["sourceIp"] = self.client_address[0]
                result = hosting.handle(event, LambdaContext(), shop)
                answer = answer_of(result)
                # an image (isBase64Encoded) sent as bytes, as the platform's HTTP API does
                body = (
                    base64.b64decode(answer.body) if result.get("isBase64Encoded") else answer.body.encode()
                )
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_OPTIONS = _serve

            def log_message(self, *args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def front() -> Iterator[_Front]:
    running = _Front()
    yield running
    running.close()


@pytest.fixture(scope="module")
def creds() -> SandboxCredentials:
    return SandboxCredentials.generate()


@pytest.fixture(scope="module")
def stripe_sandbox(creds: SandboxCredentials) -> Iterator[Sandbox]:
    with Sandbox("127.0.0.1", 0, build_providers(None, creds), quiet=True) as running:
        yield running


@dataclass
class StoreShop:
    """A hosted shop: its Shop, database URL and a signed-in admin's cookie."""

    shop: Shop
    url: str
    admin_cookie: str
    admin_id: str
    base: str
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, method: str, path: str, *, cookie: str | None = None, **kwargs: Any) -> Answer:
        headers = dict(kwargs.pop("headers", None) or {})
        if cookie:
            headers["Cookie"] = cookie
        event = build_event(method, path, headers=headers, **kwargs)
        if "source_ip" in self.extra:
            event["requestContext"]["identity"]["sourceIp"] = self.extra["source_ip"]
        return answer_of(hosting.handle(event, LambdaContext(), self.shop))

    def sql(self, statement: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            cur = conn.execute(statement, params)
            return cur.fetchall() if cur.description else []

    def product(self, slug: str, *, price: int = 1450, stock: int | None = 10, status: str = "active") -> str:
        (row,) = self.sql(
            "INSERT INTO products (title, slug, status, price_cents, track_inventory) "
            "VALUES (%s, %s, %s, %s, %s) RETURNING id::text",
            (slug.replace("-", " ").title(), slug, status, price, stock is not None),
        )
        if stock:
            self.sql(
                "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason) "
                "SELECT %s, id, %s, 'Received' FROM stock_locations WHERE is_default",
                (row[0], stock),
            )
        return str(row[0])

    def stock(self, product_id: str) -> int:
        return int(self.sql("SELECT stock_total FROM products WHERE id = %s", (product_id,))[0][0])

    def shipping(self, country: str = "FR", price: int = 490) -> str:
        zone = f"Zone {uuid.uuid4().hex[:6]}"
        (row,) = self.sql(
            "WITH z AS (INSERT INTO shipping_zones (name, countries) VALUES (%s, %s) RETURNING id) "
            "INSERT INTO shipping_methods (zone_id, name, price_cents) SELECT id, 'Standard', %s FROM z "
            "RETURNING id::text",
            (zone, [country], price),
        )
        return str(row[0])


def make_shop(monkeypatch: pytest.MonkeyPatch, url: str, *, base: str, **shop: Any) -> StoreShop:
    project = f"p_{uuid.uuid4().hex[:8]}"
    made = Shop(
        id=project,
        base_url=f"{base}/shops/{project}",
        conninfo=url,
        session_key=os.urandom(32),
        field_key=os.urandom(32),
        **shop,
    )
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO staff (email, name, role, joined_at) VALUES (%s, 'Admin', 'admin', now()) RETURNING id::text",
            (f"admin-{project}@shop.example",),
        ).fetchone()
    assert row is not None
    with tenancy.serving(made):
        cookie = f"{sessions.SESSION_COOKIE}={sessions.mint(str(row[0]))}"
    return StoreShop(made, url, cookie, str(row[0]), base)


@pytest.fixture
def hosted_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The platform's process: no self-hosted variables; storefront settings read afresh."""
    for name in SELF_HOSTED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    config.reset_settings()
    storefront_settings.reset()
    yield monkeypatch
    db.POOL.close()
    config.reset_settings()
    storefront_settings.reset()


def use_stripe(monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox, creds: SandboxCredentials) -> None:
    monkeypatch.setenv("BACKOFFICE_STRIPE_CLIENT_ID", creds.checkout_connect_client_id)
    monkeypatch.setenv("BACKOFFICE_STRIPE_SECRET_KEY", creds.checkout_secret_key)
    monkeypatch.setenv("BACKOFFICE_STRIPE_API_BASE_URL", f"{sandbox.url}/stripe")
    monkeypatch.setenv("BACKOFFICE_STRIPE_CONNECT_BASE_URL", f"{sandbox.url}/stripe/connect")
    storefront_settings.reset()


def connect_card(store: StoreShop, sandbox: Sandbox) -> str:
    """The merchant connects Stripe as a browser would: the connect route, the provider's Allow button, the
    redirect back to the shop. Returns the connected account."""
    started = store.call("POST", "/api/payments/providers/card/connect", cookie=store.admin_cookie, body={})
    assert started.status == 200, started.body
    url = started.json()["url"]
    page = httpx.get(url)
    assert page.status_code == 200 and 'id="allow"' in page.text, page.text
    fields = dict(
        (name, value) for name, value in __import__("re").findall(r'name="(\w+)" value="([^"]*)"', page.text)
    )
    import html

    fields = {k: html.unescape(v) for k, v in fields.items()}
    allowed = httpx.post(
        f"{sandbox.url}/stripe/connect/oauth/authorize", data={**fields, "decision": "allow"}
    )
    assert allowed.status_code == 302, allowed.text
    back = allowed.headers["location"]
    assert back.startswith(store.shop.base_url + "/api/payments/providers/card/callback?")
    landed = httpx.get(back, headers={"Cookie": store.admin_cookie})
    assert (landed.status_code, landed.headers.get("location")) == (
        302,
        f"/shops/{store.shop.id}/settings/payments?card=connected",
    ), landed.text
    (row,) = store.sql(
        "SELECT public_config->>'account_id' FROM payment_providers WHERE kind = 'card' AND enabled"
    )
    return str(row[0])


def fresh_database(prefix: str = "bo_store") -> Iterator[str]:
    with migrated_database(prefix) as url:
        yield url
