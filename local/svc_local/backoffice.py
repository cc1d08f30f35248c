"""The demo store's backoffice in the local stack: its own process (its functions read their own
environment, as separate Lambdas do), a database on the stack's PostgreSQL with the migrations applied and
a little demo data, and a gateway serving backoffice/template.yaml.

    python -m svc_local.backoffice  (started by svc-local; prints `backoffice <url>` then `ready`)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from svc_local.gateway import Gateway
from svc_local.state import repo_root
from svc_local.template import Template

DEFAULT_DATABASE = "svc_demo_store"
DEMO_CATEGORIES = [("Mugs", "mugs"), ("Bowls", "bowls"), ("Vases", "vases")]
DEMO_PRODUCTS = [
    ("Speckled stoneware mug", "speckled-stoneware-mug", "MUG-001", "mugs", 2800, 24),
    ("Celadon tea bowl", "celadon-tea-bowl", "BWL-001", "bowls", 3400, 3),
    ("Tall ash-glaze vase", "tall-ash-glaze-vase", "VAS-001", "vases", 7900, 0),
    ("Espresso cup pair", "espresso-cup-pair", "MUG-002", "mugs", 3600, 12),
]


def database_name() -> str:
    """The demo store's database on the server: `SVC_DEMO_STORE_DATABASE`, or svc_demo_store (test runs give
    each stack its own, so a stale one never meets a newer migration)."""
    return os.environ.get("SVC_DEMO_STORE_DATABASE") or DEFAULT_DATABASE


def database_url(server_url: str) -> str:
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{database_name()}"))


def prepare_database(server_url: str, owner_email: str) -> str:
    """Create the demo store's database once, apply pending migrations, seed the demo data when empty."""
    import psycopg

    from svc_backoffice import migrate

    name = database_name()
    with psycopg.connect(server_url, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    url = database_url(server_url)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate.migrate(migrate.psycopg_executor(conn))
        row = conn.execute("SELECT count(*) FROM staff").fetchone()
        if row is not None and row[0] == 0:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO staff (email, name, role) VALUES (%s, 'Demo owner', 'owner')", (owner_email,)
                )
                for name, slug in DEMO_CATEGORIES:
                    conn.execute("INSERT INTO categories (name, slug) VALUES (%s, %s)", (name, slug))
                for title, slug, sku, category, price, stock in DEMO_PRODUCTS:
                    conn.execute(
                        "INSERT INTO products (title, slug, sku, status, category_id, price_cents) "
                        "VALUES (%s, %s, %s, 'active', (SELECT id FROM categories WHERE slug = %s), %s)",
                        (title, slug, sku, category, price),
                    )
                    if stock:
                        conn.execute(
                            "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason) "
                            "SELECT p.id, l.id, %s, 'demo stock' FROM products p, stock_locations l "
                            "WHERE p.slug = %s AND l.is_default",
                            (stock, slug),
                        )
    return url


def main() -> None:
    port = int(os.environ.get("SVC_BACKOFFICE_PORT", "3001"))
    host = os.environ.get("SVC_HOST", "127.0.0.1")
    url = prepare_database(os.environ["SVC_BACKOFFICE_DATABASE_SERVER"], os.environ["SVC_BACKOFFICE_OWNER"])
    os.environ["DATABASE_URL"] = url
    root = repo_root()
    template = Template(Path(root) / "backoffice" / "template.yaml", package_root=root)
    gateway = Gateway(template, host, port)
    gateway.bind()
    os.environ.setdefault("HANDOFF_AUDIENCE", gateway.url)
    gateway.start()
    print(f"backoffice {gateway.url}", flush=True)
    print("ready", flush=True)
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait()
    gateway.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
