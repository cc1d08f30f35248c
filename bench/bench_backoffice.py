"""Backoffice bench: GET /api/products at 100,000 products, through the catalog handler (role gate, one
transaction, PostgreSQL), median per filter and sort; and the query count of product-by-id.
`run() -> dict` of figures; BENCH_PG_URL overrides the admin URL of the PostgreSQL server."""

from __future__ import annotations

import os
import statistics
import time
import uuid
from typing import Any

PRODUCTS = 100_000
REPEATS = 25
ADMIN_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")

SEED = """
INSERT INTO categories (name, slug) SELECT 'Category ' || i, 'category-' || i FROM generate_series(1, 50) i;
INSERT INTO products (title, slug, sku, status, type, category_id, price_cents, low_stock_threshold,
                      track_inventory, stock_total, created_at)
SELECT
  (ARRAY['Red','Blue','Green','Linen','Cotton','Walnut','Ceramic','Steel'])[1 + i % 8] || ' ' ||
  (ARRAY['shirt','mug','desk','hat','lamp','chair','scarf','bowl','vase','bag'])[1 + (i / 8) % 10] || ' ' || i,
  'product-' || i, 'SKU-' || i,
  (ARRAY['active','active','active','draft','archived'])[1 + i % 5],
  (ARRAY['physical','physical','physical','digital','service','bundle'])[1 + i % 6],
  (SELECT id FROM categories ORDER BY slug OFFSET (i % 50) LIMIT 1),
  (i * 7919) % 100000, 5, true, (i * 31) % 200 - 20,
  now() - make_interval(secs => i)
FROM generate_series(1, %(n)s) i;
UPDATE products SET stock_total = 0 WHERE stock_total < 0;
ANALYZE;
"""

CASES = {
    "default": "",
    "q": "q=walnut",
    "q_prefix_two_words": "q=lin%20sh",
    "q_sku": "q=SKU-4242",
    "q_code_part": "q=4242",
    "q_code_prefix": "q=sku-42",
    "q_code_joined": "q=sku4242",
    "status": "status=draft",
    "type": "type=service",
    "category_id": "category_id={category}",
    "out_of_stock": "out_of_stock=true",
    "low_stock": "low_stock=true",
    "sort_title_asc": "sort=title&dir=asc",
    "sort_price_desc": "sort=price&dir=desc",
    "sort_stock_asc": "sort=stock&dir=asc",
    "sort_updated_asc": "sort=updated_at&dir=asc",
    "deep_offset": "offset=5000&limit=100",
    "combined": "status=active&type=physical&category_id={category}&sort=price&dir=asc",
}


def _event(path: str, query: str, cookie: str) -> dict[str, Any]:
    params = dict(p.split("=", 1) for p in query.split("&") if p) if query else None
    from urllib.parse import unquote

    params = {k: unquote(v) for k, v in params.items()} if params else None
    return {
        "resource": path,
        "path": path,
        "httpMethod": "GET",
        "headers": {"Cookie": cookie},
        "multiValueHeaders": {"Cookie": [cookie]},
        "queryStringParameters": params,
        "multiValueQueryStringParameters": {k: [v] for k, v in params.items()} if params else None,
        "pathParameters": None,
        "body": None,
        "isBase64Encoded": False,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "stage": "live",
            "path": path,
            "identity": {"sourceIp": "127.0.0.1"},
        },
    }


class _Context:
    function_name = "bench"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    aws_request_id = "bench"


def run() -> dict[str, Any]:
    import psycopg
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from svc_backoffice import config, migrate, sessions
    from svc_backoffice.db import Database, use_database

    name = f"bo_bench_{uuid.uuid4().hex[:10]}"
    url = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    key = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    os.environ.update(
        {
            "DATABASE_URL": url,
            "SESSION_SECRET": "b" * 48,
            "HANDOFF_PUBLIC_KEY": key,
            "HANDOFF_AUDIENCE": "bench",
        }
    )
    os.environ.pop("SESSION_SECRET_ARN", None)
    config.reset_settings()
    figures: dict[str, Any] = {"products": PRODUCTS, "repeats": REPEATS}
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            migrate.migrate(migrate.psycopg_executor(conn))
            started = time.perf_counter()
            conn.execute(SEED.replace("%(n)s", str(PRODUCTS)).encode())
            # Steady state: autovacuum visits a table after a bulk insert (autovacuum_vacuum_insert_threshold);
            # measured right after the load, before that pass, q_prefix_two_words is ~13-22 ms (heap visibility).
            conn.execute("VACUUM (ANALYZE) products")
            figures["seed_seconds"] = round(time.perf_counter() - started, 2)
            staff_id = conn.execute(
                "INSERT INTO staff (email, role) VALUES ('bench@shop.example', 'viewer') RETURNING id::text"
            ).fetchone()[0]
            category = conn.execute("SELECT id::text FROM categories ORDER BY slug LIMIT 1").fetchone()[0]
            product = conn.execute("SELECT id::text FROM products LIMIT 1").fetchone()[0]
        db = Database(url)
        use_database(db)
        from backoffice.functions.catalog.app import handler

        cookie = f"svc_session={sessions.mint(staff_id)}"
        medians = {}
        for case, query in CASES.items():
            event = _event("/api/products", query.format(category=category), cookie)
            assert handler(event, _Context())["statusCode"] == 200
            timings = []
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                result = handler(event, _Context())
                timings.append((time.perf_counter() - t0) * 1000)
                assert result["statusCode"] == 200
            medians[case] = round(statistics.median(timings), 2)
        figures["list_median_ms"] = medians
        figures["list_worst_median_ms"] = max(medians.values())
        before = db.queries
        detail = _event(f"/api/products/{product}", "", cookie)
        timings = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            assert handler(detail, _Context())["statusCode"] == 200
            timings.append((time.perf_counter() - t0) * 1000)
        figures["detail_median_ms"] = round(statistics.median(timings), 2)
        figures["detail_queries_including_gate"] = (db.queries - before) / REPEATS
        db.close()
        use_database(None)
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        config.reset_settings()
    return figures


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
